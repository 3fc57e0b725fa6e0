// Schema enums -> c10 enums, by name (the C++ twin of python/externspec/abi/torch_types.py).
//
// Two numberings are in play and are never mixed: the file format's (ScalarType::LONG == 5) and
// c10's (c10::ScalarType::Long == 4). Spec values go through the schema's name table; torch-written
// enum defaults that arrive as c10 integers go through the `*_from_c10` range checks.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>
#include <string>

#include <externspec/externspec.h>

namespace externspec {

// Each throws UnsupportedError for a value with no c10 counterpart (UNKNOWN, unassigned numbers).
c10::ScalarType to_c10(ScalarType value);
c10::Layout to_c10(Layout value);
c10::MemoryFormat to_c10(MemoryFormat value);
c10::Device to_c10(const Device& value);
// The device an `as_device` argument passes: the runtime device when one is given, in place of
// the serialized one (torch's proxy executor since pytorch#184741: a package compiled on cuda:0
// and run on cuda:1 creates its tensors on cuda:1), else the serialized device. The serialized
// device is checked (to_c10) either way. docs/torch-compat.md, "The runtime device".
// A device option ("cpu", "cuda:1"): UnsupportedError naming it when c10 does not know it.
c10::Device parse_device(const std::string& text);
c10::Device runtime_device(const Device& value, const std::optional<c10::Device>& runtime);

c10::ScalarType scalar_type_from_c10(std::int64_t value);
c10::Layout layout_from_c10(std::int64_t value);
c10::MemoryFormat memory_format_from_c10(std::int64_t value);

}  // namespace externspec
