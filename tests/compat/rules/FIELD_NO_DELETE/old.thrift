// compat fixture for [FIELD_NO_DELETE]: the old revision
struct Device {
  10: string type;
  20: optional i64 index;
}
