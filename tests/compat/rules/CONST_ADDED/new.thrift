// compat fixture for [CONST_ADDED]: the new revision
const i64 LIMIT = 8
const string MODE = "fast"
struct Device {
  10: string type;
  20: optional i64 index;
}
