// The limits a load honours (SECURITY.md), one object: the executor reads `max_json_bytes`, the
// runner all of them. Python's twin is `externspec.Limits` (python/externspec/wire/limits.py), with
// the same names and defaults (tests/aoti/test_limits_both_languages.py compares them through the
// binding); Python's es.cpp passes its limits as they are at each load, so a limit lowered in Python
// (`externspec.wire.MAX_JSON_BYTES = n`) binds the C++ executor and the runner too.
#pragma once

#include <cstdint>

#include <externspec/wire.h>

namespace externspec {

struct Limits {
  // Bytes of one JSON document: the extern-kernel file, and each JSON member of a package.
  std::uint64_t max_json_bytes = MAX_JSON_BYTES;
  // Bytes of the wrapper source (`*.wrapper.cpp`) read into memory for its records.
  std::uint64_t max_source_bytes = std::uint64_t{64} << 20;
  // Bytes written to disk (the model's library plus any weight blob; from a package given as bytes,
  // the blob is held in memory instead and counts the same); 0: 16 times the package's size (torch
  // stores members uncompressed, so a package never needs more).
  std::uint64_t max_extracted_bytes = 0;
  // Bytes of each torchbind object read with AOTIRunnerOptions::load_custom_objects.
  std::uint64_t max_custom_object_bytes = std::uint64_t{256} << 20;
};

}  // namespace externspec
