// The translation units whose compile time benchmarks/bench_cpp_decode.py measures (g++ -O2 -c):
// a decode of ExternKernelNodes with the default backend (header-only, or under
// -DEXTERNSPEC_SEPARATE_CODEC with the codec compiled elsewhere; -DEXTERNSPEC_CODEC_DEFINITIONS makes
// it that codec unit), or, under -DINCLUDE_ONLY,
// nlohmann/json.hpp alone (the floor of any program that includes the default backend).
#if defined(INCLUDE_ONLY)
#include <nlohmann/json.hpp>
#else
#include <externspec/externspec.h>

std::size_t decode_nodes(const std::string& json) {
  return externspec::decode<externspec::ExternKernelNodes>(json).nodes.size();
}
#endif
