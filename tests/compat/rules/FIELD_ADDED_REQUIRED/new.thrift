// compat fixture for [FIELD_ADDED_REQUIRED]: the new revision
struct Device {
  10: string type;
  20: optional i64 index;
  30: string label;
  40: required i64 count;
}
