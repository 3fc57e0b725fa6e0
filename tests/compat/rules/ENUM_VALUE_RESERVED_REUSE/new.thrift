// compat fixture for [ENUM_VALUE_RESERVED_REUSE]: the new revision
enum Color {
  RED = 0,
  LIME = 1,
  GREEN = 3,
  BLUE = 2,
}
