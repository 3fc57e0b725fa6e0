// Schema enums -> c10 enums, by name (the C++ twin of python/externspec/torch_types.py).
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

#include <externspec/externspec.h>

namespace externspec {

// Each throws UnsupportedError for a value with no c10 counterpart (UNKNOWN, unassigned numbers).
c10::ScalarType to_c10(ScalarType value);
c10::Layout to_c10(Layout value);
c10::MemoryFormat to_c10(MemoryFormat value);
c10::Device to_c10(const Device& value);

c10::ScalarType scalar_type_from_c10(std::int64_t value);
c10::Layout layout_from_c10(std::int64_t value);
c10::MemoryFormat memory_format_from_c10(std::int64_t value);

}  // namespace externspec
