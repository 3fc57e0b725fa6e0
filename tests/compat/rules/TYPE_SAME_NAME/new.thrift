// compat fixture for [TYPE_SAME_NAME]: the new revision
struct Device {
  10: string type;
  20: optional i64 index;
}

struct Extra2 {
  10: string name;
}
