// compat fixture for [TYPE_ADDED]: the old revision
struct Device {
  10: string type;
  20: optional i64 index;
}
