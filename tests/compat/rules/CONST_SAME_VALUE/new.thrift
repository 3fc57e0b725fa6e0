// compat fixture for [CONST_SAME_VALUE]: the new revision
const i64 LIMIT = 9
struct Device {
  10: string type;
  20: optional i64 index;
}
