// compat fixture for [ENUM_VALUE_SAME_NAME]: the new revision
enum Color {
  RED = 0,
  LIME = 1,
  BLUE = 2,
}
