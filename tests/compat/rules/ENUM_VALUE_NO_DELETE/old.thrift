// compat fixture for [ENUM_VALUE_NO_DELETE]: the old revision
enum Color {
  RED = 0,
  GREEN = 1,
  BLUE = 2,
}
