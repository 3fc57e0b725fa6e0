/** Values with a gap, as torch's ScalarType has. */
enum Kind {
  NONE = 0,
  SMALL = 1,
  /** Skips 3..9. */
  LARGE = 10,
}

struct Tagged {
  10: Kind kind;
  20: list<Kind> history;
}
