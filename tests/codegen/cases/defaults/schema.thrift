enum Mode {
  FAST = 1,
  SAFE = 2,
}

/** Every default kind the wire format supports. */
struct Options {
  10: bool verbose = false;
  20: i64 retries = 3;
  30: double scale = 1.5;
  40: string name = "<=2.4";
  50: list<string> tags = [];
  60: map<string, i64> limits = {"a": 1};
  70: Mode mode = Mode.SAFE;
  80: i64 required_count;
}

const Options DEFAULT_OPTIONS = {"required_count": 0, "mode": Mode.FAST}
const i64 LIMIT = 7
