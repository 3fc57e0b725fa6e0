// compat fixture for [ENUM_VALUE_NO_DELETE]: the new revision
enum Color {
  RED = 0,
  BLUE = 2,
} (reserved_ids = "1", reserved_names = "GREEN")
