// The bounds no option changes (limits.def's ES_LIMIT_FIXED, which Python's externspec.wire.limits
// reads too): detail::fixed::small_json_bytes, elf_sections, ...
#pragma once

#include <cstdint>

namespace externspec::detail::fixed {

#define ES_LIMIT_FIXED(name, value) inline constexpr std::uint64_t name = value;
#include <externspec/torch/limits.def>
#undef ES_LIMIT_FIXED

}  // namespace externspec::detail::fixed
