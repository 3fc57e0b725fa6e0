// compat fixture for [FIELD_ENUM_INT_SWAPPED]: the old revision
enum Color {
  RED = 0,
  GREEN = 1,
  BLUE = 2,
}

struct Pixel {
  10: i32 color;
}
