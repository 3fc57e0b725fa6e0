// compat fixture for [FIELD_ENUM_INT_SWAPPED]: the new revision
enum Color {
  RED = 0,
  GREEN = 1,
  BLUE = 2,
}

struct Pixel {
  10: Color color;
}
