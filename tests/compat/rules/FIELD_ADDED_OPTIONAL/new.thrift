// compat fixture for [FIELD_ADDED_OPTIONAL]: the new revision
struct Device {
  10: string type;
  20: optional i64 index;
  30: optional string label;
  40: i64 count = 1;
}
