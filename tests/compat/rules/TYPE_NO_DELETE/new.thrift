// compat fixture for [TYPE_NO_DELETE]: the new revision
struct Device {
  10: string type;
  20: optional i64 index;
}
