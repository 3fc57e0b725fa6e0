// compat fixture for [ENUM_VALUE_RESERVED_REUSE]: the old revision
enum Color {
  RED = 0,
  BLUE = 2,
} (reserved_ids = "1", reserved_names = "GREEN")
