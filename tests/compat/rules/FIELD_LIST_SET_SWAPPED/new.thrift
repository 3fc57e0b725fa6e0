// compat fixture for [FIELD_LIST_SET_SWAPPED]: the new revision
struct Tags {
  10: set<string> names;
}
