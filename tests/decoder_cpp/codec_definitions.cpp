// The codec of the harness's "nlohmann-separate" build (tests/decoder_cpp/harness.py): instantiated here,
// once, and linked with conformance_harness.cpp compiled under EXTERNSPEC_SEPARATE_CODEC.
#define EXTERNSPEC_CODEC_DEFINITIONS
#include <externspec/externspec.h>
