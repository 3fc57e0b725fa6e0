// compat fixture for [FIELD_SAME_TYPE]: the old revision
struct Device {
  10: string type;
  20: optional i64 index;
}

/** The typedef changes, the field line does not: typedefs are resolved. */
typedef list<i64> Sizes

struct Meta {
  10: Sizes sizes;
  20: map<string, list<double>> ranges;
  30: Device device;
}

struct Other {
  10: string name;
}
