// compat fixture for [TYPE_SAME_KIND]: the new revision
struct Device {
  10: string type;
  20: optional i64 index;
}

union Pair {
  10: i64 a;
  20: i64 b;
}
