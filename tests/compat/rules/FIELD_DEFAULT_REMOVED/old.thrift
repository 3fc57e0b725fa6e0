// compat fixture for [FIELD_DEFAULT_REMOVED]: the old revision
struct Device {
  10: string type = "cpu";
  20: optional i64 index;
}
