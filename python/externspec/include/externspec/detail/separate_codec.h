// The default backend, or separate compilation of the codec.
// Part of externspec.h, which includes it where the generated declarations it needs are
// visible; not a header to include on its own.
#pragma once

// Header-only (the default), every translation unit that decodes instantiates the codec for the types
// it uses, over nlohmann/json.hpp: about 9 s of g++ -O2 per unit. With EXTERNSPEC_SEPARATE_CODEC the
// unit declares the instantiations `extern` and compiles neither them nor json.hpp; the one unit
// that defines EXTERNSPEC_CODEC_DEFINITIONS instantiates decode<T> (default backend) and encode(T)
// for every T of EXTERNSPEC_CODEC_TYPES (every enum, struct and union), which the linker then
// resolves (protobuf's .pb.h/.pb.cc split). Other backends are still instantiated where used.
#if defined(EXTERNSPEC_CODEC_DEFINITIONS) && defined(EXTERNSPEC_NO_DEFAULT_BACKEND)
#error "EXTERNSPEC_CODEC_DEFINITIONS instantiates the default backend: do not define EXTERNSPEC_NO_DEFAULT_BACKEND"
#endif

#if defined(EXTERNSPEC_CODEC_DEFINITIONS) || !(defined(EXTERNSPEC_NO_DEFAULT_BACKEND) || defined(EXTERNSPEC_SEPARATE_CODEC))
#include "../backend_nlohmann.h"
#endif

#if defined(EXTERNSPEC_CODEC_DEFINITIONS) || defined(EXTERNSPEC_SEPARATE_CODEC)
#if defined(EXTERNSPEC_CODEC_DEFINITIONS)
#define EXTERNSPEC_CODEC_INSTANTIATION_(T)                                      \
  template T decode<T, NlohmannBackend>(std::string_view, bool, std::uint64_t); \
  template std::string encode<T>(const T&);
#else
#define EXTERNSPEC_CODEC_INSTANTIATION_(T)                                             \
  extern template T decode<T, NlohmannBackend>(std::string_view, bool, std::uint64_t); \
  extern template std::string encode<T>(const T&);
#endif
namespace externspec {
EXTERNSPEC_CODEC_TYPES(EXTERNSPEC_CODEC_INSTANTIATION_)
}  // namespace externspec
#undef EXTERNSPEC_CODEC_INSTANTIATION_
#endif
