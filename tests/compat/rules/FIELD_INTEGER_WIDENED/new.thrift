// compat fixture for [FIELD_INTEGER_WIDENED]: the new revision
struct Span {
  10: i64 start;
  20: list<i64> steps;
}
