// compat fixture for [TYPE_SAME_NAME]: the old revision
struct Device {
  10: string type;
  20: optional i64 index;
}

struct Extra {
  10: string name;
}
