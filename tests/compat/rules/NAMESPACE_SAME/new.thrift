// compat fixture for [NAMESPACE_SAME]: the new revision
namespace py externspec2

struct Device {
  10: string type;
  20: optional i64 index;
}
