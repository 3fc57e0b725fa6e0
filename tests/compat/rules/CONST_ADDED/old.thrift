// compat fixture for [CONST_ADDED]: the old revision
const i64 LIMIT = 8
struct Device {
  10: string type;
  20: optional i64 index;
}
