// compat fixture for [FIELD_RESERVED_REUSE]: the old revision
struct Device {
  10: string type;
} (reserved_ids = "20", reserved_names = "index")
