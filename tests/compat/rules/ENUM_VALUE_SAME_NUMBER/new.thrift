// compat fixture for [ENUM_VALUE_SAME_NUMBER]: the new revision
enum Color {
  RED = 0,
  GREEN = 1,
  BLUE = 7,
}
