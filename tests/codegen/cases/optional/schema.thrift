/** Optional fields read null or a missing key as unset. */
struct Device {
  10: string type;
  /** null means the current device. */
  20: optional i64 index;
  30: optional Device fallback;
  /** Omitted from the JSON when unset. */
  40: optional string label (json.omit_if_null = "true");
}
