// compat fixture for [FIELD_DEFAULT_ADDED]: the new revision
struct Device {
  10: string type = "cpu";
  20: optional i64 index;
}
