// compat fixture for [ENUM_VALUE_ADDED]: the new revision
enum Color {
  RED = 0,
  GREEN = 1,
  BLUE = 2,
  ALPHA = 3,
}
