// A package's small JSON members (`*.wrapper_metadata.json`, `custom_objs_config.json`): JSON
// objects of strings, read with externspec's bounded JSON reader.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "aoti_package/fixed_limits.h"

namespace externspec::detail {

// `s` in backticks; a NUL byte as `\0` (messages are C strings once they cross into Python).
std::string ticked(std::string_view s);

// A JSON object whose values are all strings (a package's `*.wrapper_metadata.json`, its
// `custom_objs_config.json`), read with externspec's bounded JSON reader (the decoder's size and
// nesting limits, MAX_JSON_BYTES and MAX_JSON_DEPTH, applied before and while parsing). Throws
// PackageError naming `label` and the key: not JSON, not an object, a value that is not a string, a
// key given twice; `kind` names the member in messages ("a package's metadata").
std::vector<std::pair<std::string, std::string>> string_object(std::string_view json, const std::string& label,
                                                              const std::string& kind);

// The most a package's small JSON members (`*.wrapper_metadata.json`, `custom_objs_config.json`)
// may record (limits.def's small_json_bytes, which Python reads too).
constexpr std::uint64_t kSmallJsonLimit = fixed::small_json_bytes;

}  // namespace externspec::detail
