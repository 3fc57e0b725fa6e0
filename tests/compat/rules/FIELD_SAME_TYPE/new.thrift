// compat fixture for [FIELD_SAME_TYPE]: the new revision
struct Device {
  10: string type;
  20: optional i64 index;
}

/** The typedef changes, the field line does not: typedefs are resolved. */
typedef list<string> Sizes

struct Meta {
  10: Sizes sizes;
  20: map<string, list<i64>> ranges;
  30: Other device;
}

struct Other {
  10: string name;
}
