// compat fixture for [FIELD_SAME_TYPE]: the new revision
struct Device {
  10: string type;
  20: optional i64 index;
}

struct Meta {
  10: list<string> sizes;
  20: map<string, list<i64>> ranges;
  30: Other device;
}

struct Other {
  10: string name;
}
