/** Self-recursive through a list. */
struct Tree {
  10: string label;
  20: list<Tree> children;
}

/** Recursive through a map inside a union. */
union Expr {
  10: i64 as_int;
  20: map<string, Expr> as_record;
  30: Call as_call;
}

/** Mutually recursive with Expr. */
struct Call {
  10: string fn;
  20: list<Expr> arguments;
}
