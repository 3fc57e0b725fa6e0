// compat fixture for [UNION_MEMBER_NO_DELETE]: the old revision
union Arg {
  10: i64 as_int;
  20: string as_string;
}
