// compat fixture for [FIELD_SAME_ID]: the new revision
struct Device {
  10: string type;
  25: optional i64 index;
}
