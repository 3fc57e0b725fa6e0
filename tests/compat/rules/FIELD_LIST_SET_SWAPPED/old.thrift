// compat fixture for [FIELD_LIST_SET_SWAPPED]: the old revision
struct Tags {
  10: list<string> names;
}
