// libFuzzer target: externspec's C++ decoder on arbitrary bytes, built with ASan + UBSan.
//
// Input layout: byte 0 picks the document type (mod the table below) and strictness (bit 7); the
// rest is the JSON text. The seeds are the conformance corpus with that byte prepended
// (tests/fuzz/run_fuzz.py writes them).
//
// What counts as a bug, besides anything the sanitizers report:
//   * an exception other than externspec::DecodeError / VersionError escaping decode();
//   * an accepted document whose encoding does not decode again to the same encoding (the
//     encoder and decoder disagree about the wire format).
#include <externspec/externspec.h>
#ifdef FUZZ_SIMDJSON
#include <externspec/backend_simdjson.h>
using Backend = externspec::SimdjsonBackend;
#else
using Backend = externspec::NlohmannBackend;
#endif

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

template <class T>
void roundtrip(std::string_view json, bool strict) {
  std::string first;
  try {
    first = externspec::encode(externspec::decode<T, Backend>(json, strict));
  } catch (const externspec::DecodeError& e) {
    if (e.errors().empty() || e.path().empty() || e.path()[0] != '$') {
      std::fprintf(stderr, "DecodeError without a JSON path: %s\n", e.what());
      std::abort();
    }
    return;
  } catch (const externspec::VersionError&) {
    return;
  }
  std::string second;
  try {
    second = externspec::encode(externspec::decode<T, Backend>(first, strict));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accepted document re-encodes to one the decoder rejects: %s\n%s\n", e.what(),
                 first.c_str());
    std::abort();
  }
  if (second != first) {
    std::fprintf(stderr, "encode(decode(encode(x))) != encode(x):\n%s\n%s\n", first.c_str(), second.c_str());
    std::abort();
  }
}

using Fn = void (*)(std::string_view, bool);
// Keep in step with TYPES in tests/fuzz/run_fuzz.py (seed files name the type by index).
constexpr Fn kTypes[] = {
    roundtrip<externspec::ExternKernelNodes>, roundtrip<externspec::ExportedProgram>,
    roundtrip<externspec::Node>,              roundtrip<externspec::Argument>,
    roundtrip<externspec::Graph>,             roundtrip<externspec::TensorMeta>,
    roundtrip<externspec::Device>,            roundtrip<externspec::ExternKernelNode>,
};
constexpr std::size_t kNumTypes = sizeof(kTypes) / sizeof(kTypes[0]);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool strict = (data[0] & 0x80) != 0;
  const Fn fn = kTypes[(data[0] & 0x7f) % kNumTypes];
  // Unexpected exceptions escape to libFuzzer's handler, which reports them as a crash.
  fn(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1), strict);
  return 0;
}
