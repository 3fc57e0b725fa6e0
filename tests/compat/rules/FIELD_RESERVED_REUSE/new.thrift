// compat fixture for [FIELD_RESERVED_REUSE]: the new revision
struct Device {
  10: string type;
  20: optional string label;
  30: optional i64 index;
}
