// compat fixture for [FIELD_SAME_NAME]: the new revision
struct Device {
  10: string type;
  20: optional i64 device_index;
}
