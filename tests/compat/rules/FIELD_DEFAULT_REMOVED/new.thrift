// compat fixture for [FIELD_DEFAULT_REMOVED]: the new revision
struct Device {
  10: string type;
  20: optional i64 index;
}
