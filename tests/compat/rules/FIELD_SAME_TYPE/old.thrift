// compat fixture for [FIELD_SAME_TYPE]: the old revision
struct Device {
  10: string type;
  20: optional i64 index;
}

struct Meta {
  10: list<i64> sizes;
  20: map<string, list<double>> ranges;
  30: Device device;
}

struct Other {
  10: string name;
}
