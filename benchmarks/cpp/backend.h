// The externspec backend a benchmark program decodes with: simdjson under -DDECODER_SIMDJSON,
// else the default (nlohmann). Shared by bench_decode.cpp and peak_rss.cpp.
#pragma once

#include <externspec/externspec.h>
#if defined(DECODER_SIMDJSON)
#include <externspec/backend_simdjson.h>
using Backend = externspec::SimdjsonBackend;
#else
using Backend = externspec::NlohmannBackend;
#endif
