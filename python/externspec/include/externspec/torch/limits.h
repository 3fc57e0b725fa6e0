// The limits a load honours (SECURITY.md), one object: the executor reads `max_json_bytes`, the
// runner all of them. Python's twin is `externspec.Limits` (python/externspec/wire/limits.py), with
// the same names; the defaults are one table both read (limits.def;
// tests/aoti/test_limits_both_languages.py compares them through the binding); Python's es.cpp passes its limits as they are at each load, so a limit lowered in Python
// (`externspec.wire.MAX_JSON_BYTES = n`) binds the C++ executor and the runner too.
#pragma once

#include <cstdint>

#include <externspec/wire.h>

namespace externspec {

struct Limits {
  // Bytes of one JSON document: the extern-kernel file, and each JSON member of a package.
  std::uint64_t max_json_bytes = MAX_JSON_BYTES;
  // max_source_bytes, max_extracted_bytes, max_custom_object_bytes: limits.def says what each bounds.
#define ES_LIMIT_DEFAULT(name, bytes) std::uint64_t name = bytes;
#include <externspec/torch/limits.def>
#undef ES_LIMIT_DEFAULT
};

}  // namespace externspec
