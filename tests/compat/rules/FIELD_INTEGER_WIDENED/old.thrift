// compat fixture for [FIELD_INTEGER_WIDENED]: the old revision
struct Span {
  10: i32 start;
  20: list<i16> steps;
}
