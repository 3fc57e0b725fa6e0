// compat fixture for [FIELD_SAME_REQUIREDNESS]: the new revision
struct Device {
  10: optional string type;
  20: i64 index;
}
