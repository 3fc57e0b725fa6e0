// compat fixture for [ENUM_VALUE_NO_DELETE_UNLESS_RESERVED]: the old revision
enum Color {
  RED = 0,
  GREEN = 1,
  BLUE = 2,
}
