// compat fixture for [UNION_MEMBER_NO_DELETE]: the new revision
union Arg {
  10: i64 as_int;
} (reserved_ids = "20", reserved_names = "as_string")
