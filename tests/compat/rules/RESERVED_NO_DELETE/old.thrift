// compat fixture for [RESERVED_NO_DELETE]: the old revision
struct Device {
  10: string type;
  20: optional i64 index;
} (reserved_ids = "30, 40-41", reserved_names = "ordinal")
