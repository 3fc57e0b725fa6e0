// compat fixture for [UNION_MEMBER_ADDED]: the new revision
union Arg {
  10: i64 as_int;
  20: string as_string;
  30: double as_float;
}
