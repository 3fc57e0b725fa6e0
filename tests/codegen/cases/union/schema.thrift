/** A tagged value. */
union Value {
  10: i64 as_int;
  20: double as_float;
  /** A list member. */
  30: list<string> as_strings;
  40: Point as_point;
}

/** A point. */
struct Point {
  10: i64 x;
  20: i64 y;
}
