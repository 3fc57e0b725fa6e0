// compat fixture for [FIELD_SAME_DEFAULT]: the new revision
struct Device {
  10: string type = "cuda";
  20: optional i64 index;
}
