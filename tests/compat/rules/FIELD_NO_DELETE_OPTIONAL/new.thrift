// compat fixture for [FIELD_NO_DELETE_OPTIONAL]: the new revision
struct Device {
  10: string type;
} (reserved_ids = "20", reserved_names = "index")
