// compat fixture for [TYPE_SAME_KIND]: the old revision
struct Device {
  10: string type;
  20: optional i64 index;
}

struct Pair {
  10: i64 a;
  20: i64 b;
}
