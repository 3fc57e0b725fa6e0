// compat fixture for [FIELD_SAME_DEFAULT]: the old revision
struct Device {
  10: string type = "cpu";
  20: optional i64 index;
}
