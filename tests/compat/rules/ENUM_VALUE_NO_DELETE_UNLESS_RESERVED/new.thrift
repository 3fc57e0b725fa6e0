// compat fixture for [ENUM_VALUE_NO_DELETE_UNLESS_RESERVED]: the new revision
enum Color {
  RED = 0,
  BLUE = 2,
}
