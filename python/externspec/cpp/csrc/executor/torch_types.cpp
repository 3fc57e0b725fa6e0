#include "executor/torch_types.h"

#include <c10/util/Exception.h>

#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include <externspec/torch/errors.h>
#include <externspec/messages.h>

namespace externspec {
namespace {

template <class E, class C, std::size_t N>
C convert(E value, const std::pair<E, C> (&table)[N], const char* what, const char* torch_what) {
  for (const auto& [member, c] : table)
    if (member == value) return c;
  // Python's wording: "ScalarType 0 (UNKNOWN) names no torch dtype".
  std::string_view name = externspec::to_string(value);
  throw UnsupportedError(std::string(what) + " " + std::to_string(static_cast<std::int64_t>(value)) + " (" +
                         (name.empty() ? std::string("?") : std::string(name)) + ") names no torch " + torch_what);
}

// Schema member -> c10 value, from the data externspec/abi/torch_types.py reads too.
const std::pair<ScalarType, c10::ScalarType> kScalarTypes[] = {
#define ES_SCALAR_TYPE(member, attribute, c10_name) {ScalarType::member, c10::ScalarType::c10_name},
#include <externspec/torch/torch_enums.def>
};
const std::pair<Layout, c10::Layout> kLayouts[] = {
#define ES_LAYOUT(member, attribute, c10_name) {Layout::member, c10::Layout::c10_name},
#include <externspec/torch/torch_enums.def>
};
const std::pair<MemoryFormat, c10::MemoryFormat> kMemoryFormats[] = {
#define ES_MEMORY_FORMAT(member, attribute, c10_name) {MemoryFormat::member, c10::MemoryFormat::c10_name},
#include <externspec/torch/torch_enums.def>
};

[[noreturn]] void unknown_c10(const char* what, std::int64_t value) {
  throw UnsupportedError(message(Message::C10_NUMBER_UNKNOWN, {{"what", what}, {"value", std::to_string(value)}}));
}

}  // namespace

c10::ScalarType to_c10(ScalarType value) { return convert(value, kScalarTypes, "ScalarType", "dtype"); }
c10::Layout to_c10(Layout value) { return convert(value, kLayouts, "Layout", "layout"); }
c10::MemoryFormat to_c10(MemoryFormat value) { return convert(value, kMemoryFormats, "MemoryFormat", "memory format"); }

#define ES_DENY(pattern, reason)
#define ES_GUARD(op, arg, value, arg2, value2, reason)
#define ES_REVIEWED(pattern, reason)
#define ES_LIMIT(name, value) constexpr std::int64_t limit_##name = value;
#include <externspec/torch/op_policy.def>
#undef ES_DENY
#undef ES_GUARD
#undef ES_REVIEWED
#undef ES_LIMIT
static_assert(limit_device_index_max == std::numeric_limits<c10::DeviceIndex>::max(),
              "op_policy.def's device_index_max must be c10's DeviceIndex maximum");

c10::Device to_c10(const Device& value) {
  // c10's DeviceIndex is int8: a larger index would wrap (257 is device 1).
  if (value.index && (*value.index < 0 || *value.index > limit_device_index_max))
    throw UnsupportedError(message(Message::DEVICE_INDEX_RANGE,
                                   {{"device", "'" + value.type + "':" + std::to_string(*value.index)},
                                    {"top", std::to_string(limit_device_index_max)}}));
  std::string text = value.type;
  if (value.index) text += ":" + std::to_string(*value.index);
  try {
    return c10::Device(text);
  } catch (const c10::Error& e) {
    std::string device = "'" + value.type + "':" + (value.index ? std::to_string(*value.index) : "None");
    throw UnsupportedError(message(Message::NOT_A_DEVICE, {{"device", device}, {"why", e.what_without_backtrace()}}));
  }
}

c10::Device parse_device(const std::string& text) {
  // c10 parses the index into an int8 (DeviceIndex): "cuda:257" would silently be cuda:1.
  const auto colon = text.rfind(':');
  const std::string digits = colon == std::string::npos ? std::string() : text.substr(colon + 1);
  if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos &&
      (digits.size() > 3 || std::stoi(digits) > limit_device_index_max))
    throw UnsupportedError(message(Message::DEVICE_INDEX_RANGE,
                                   {{"device", "'" + text + "'"}, {"top", std::to_string(limit_device_index_max)}}));
  c10::Device device(c10::kCPU);
  try {
    device = c10::Device(text);
  } catch (const c10::Error& e) {
    throw UnsupportedError(
        message(Message::NOT_A_DEVICE, {{"device", "'" + text + "'"}, {"why", e.what_without_backtrace()}}));
  }
  // The CPU is one device: its tensors carry no index, so "cpu:0" is "cpu" (kept, it refused them all).
  if (device.is_cpu() && device.has_index()) {
    if (device.index() != 0)
      throw UnsupportedError(message(Message::CPU_DEVICE_INDEX,
                                     {{"device", "'" + text + "'"}, {"index", std::to_string(device.index())}}));
    device = c10::Device(c10::kCPU);
  }
  return device;
}

c10::Device runtime_device(const Device& value, const std::optional<c10::Device>& runtime) {
  c10::Device serialized = to_c10(value);
  return runtime ? *runtime : serialized;
}

c10::ScalarType scalar_type_from_c10(std::int64_t value) {
  if (value < 0 || value >= static_cast<std::int64_t>(c10::ScalarType::Undefined)) unknown_c10("ScalarType", value);
  return static_cast<c10::ScalarType>(value);
}

c10::Layout layout_from_c10(std::int64_t value) {
  if (value < 0 || value >= static_cast<std::int64_t>(c10::Layout::NumOptions)) unknown_c10("Layout", value);
  return static_cast<c10::Layout>(value);
}

c10::MemoryFormat memory_format_from_c10(std::int64_t value) {
  if (value < 0 || value >= static_cast<std::int64_t>(c10::MemoryFormat::NumOptions)) unknown_c10("MemoryFormat", value);
  return static_cast<c10::MemoryFormat>(value);
}

}  // namespace externspec
