// compat fixture for [FIELD_NO_DELETE]: the new revision
struct Device {
  20: optional i64 index;
} (reserved_ids = "10", reserved_names = "type")
