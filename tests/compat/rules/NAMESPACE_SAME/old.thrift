// compat fixture for [NAMESPACE_SAME]: the old revision
namespace py externspec

struct Device {
  10: string type;
  20: optional i64 index;
}
