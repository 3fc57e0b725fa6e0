// compat fixture for [FIELD_NO_DELETE_UNLESS_RESERVED]: the new revision
struct Device {
  10: string type;
} (reserved_ids = "20")
