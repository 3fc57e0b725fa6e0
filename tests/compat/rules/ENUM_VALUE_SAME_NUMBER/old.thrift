// compat fixture for [ENUM_VALUE_SAME_NUMBER]: the old revision
enum Color {
  RED = 0,
  GREEN = 1,
  BLUE = 2,
}
