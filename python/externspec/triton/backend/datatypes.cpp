#include "datatypes.h"

#include <array>

namespace externspec::triton {
namespace {

struct Row {
  c10::ScalarType dtype;
  const char* config;
  TRITONSERVER_DataType wire;
};

constexpr std::array<Row, 13> kTypes{{
    {c10::kBool, "TYPE_BOOL", TRITONSERVER_TYPE_BOOL},
    {c10::kByte, "TYPE_UINT8", TRITONSERVER_TYPE_UINT8},
    {c10::kUInt16, "TYPE_UINT16", TRITONSERVER_TYPE_UINT16},
    {c10::kUInt32, "TYPE_UINT32", TRITONSERVER_TYPE_UINT32},
    {c10::kUInt64, "TYPE_UINT64", TRITONSERVER_TYPE_UINT64},
    {c10::kChar, "TYPE_INT8", TRITONSERVER_TYPE_INT8},
    {c10::kShort, "TYPE_INT16", TRITONSERVER_TYPE_INT16},
    {c10::kInt, "TYPE_INT32", TRITONSERVER_TYPE_INT32},
    {c10::kLong, "TYPE_INT64", TRITONSERVER_TYPE_INT64},
    {c10::kHalf, "TYPE_FP16", TRITONSERVER_TYPE_FP16},
    {c10::kFloat, "TYPE_FP32", TRITONSERVER_TYPE_FP32},
    {c10::kDouble, "TYPE_FP64", TRITONSERVER_TYPE_FP64},
    {c10::kBFloat16, "TYPE_BF16", TRITONSERVER_TYPE_BF16},
}};

}  // namespace

std::optional<std::string> config_type(c10::ScalarType dtype) {
  for (const Row& row : kTypes)
    if (row.dtype == dtype) return std::string(row.config);
  return std::nullopt;
}

std::optional<c10::ScalarType> from_config_type(const std::string& name) {
  for (const Row& row : kTypes)
    if (name == row.config) return row.dtype;
  return std::nullopt;
}

TRITONSERVER_DataType wire_type(c10::ScalarType dtype) {
  for (const Row& row : kTypes)
    if (row.dtype == dtype) return row.wire;
  return TRITONSERVER_TYPE_INVALID;
}

std::optional<c10::ScalarType> from_wire_type(TRITONSERVER_DataType type) {
  for (const Row& row : kTypes)
    if (row.wire == type) return row.dtype;
  return std::nullopt;
}

std::string wire_name(TRITONSERVER_DataType type) {
  for (const Row& row : kTypes)
    if (row.wire == type) return std::string(row.config).substr(5);
  return type == TRITONSERVER_TYPE_BYTES ? "BYTES" : "INVALID";
}

}  // namespace externspec::triton
