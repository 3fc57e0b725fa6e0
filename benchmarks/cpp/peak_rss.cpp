// Peak memory of one decode (benchmarks/bench_hostile.py): the file is read into a string of its
// exact size, then decoded once; the peak RSS growth over the state after the read is printed.
// One source, three decoders, chosen at compile time:
//   -DDECODER_TORCH     torch's generated_serialization_types.h (nlohmann::json::parse + from_json)
//   -DDECODER_NLOHMANN  externspec::decode<T> with the default (nlohmann) backend
//   -DDECODER_SIMDJSON  externspec::decode<T, SimdjsonBackend>
// usage: peak_rss <ExternKernelNodes|Argument> <file>   ->   "<seconds>\t<peak growth bytes>\t<outcome>"
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>

#if defined(DECODER_TORCH)
#include <torch/csrc/utils/generated_serialization_types.h>
template <class T>
static void decode(const std::string& json) {
  T value = nlohmann::json::parse(json).get<T>();
  (void)value;
}
using ExternKernelNodes = torch::_export::ExternKernelNodes;
using Argument = torch::_export::Argument;
#else
#include "backend.h"
template <class T>
static void decode(const std::string& json) {
  T value = externspec::decode<T, Backend>(json);
  (void)value;
}
using ExternKernelNodes = externspec::ExternKernelNodes;
using Argument = externspec::Argument;
#endif

static long peak_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss * 1024L;  // Linux: kilobytes
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <ExternKernelNodes|Argument> <file>\n", argv[0]);
    return 2;
  }
  const std::string type = argv[1];
  std::ifstream in(argv[2], std::ios::binary | std::ios::ate);
  std::string json(static_cast<std::size_t>(in.tellg()), '\0');
  in.seekg(0);
  in.read(json.data(), static_cast<std::streamsize>(json.size()));
  const long base = peak_bytes();
  const auto start = std::chrono::steady_clock::now();
  std::string outcome = "accepted";
  try {
    if (type == "ExternKernelNodes")
      decode<ExternKernelNodes>(json);
    else if (type == "Argument")
      decode<Argument>(json);
    else
      outcome = "unknown type " + type;
  } catch (const std::bad_alloc&) {
    outcome = "bad_alloc";
  } catch (const std::exception& e) {
    outcome = std::string(e.what()).substr(0, 90);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (char& c : outcome)
    if (c == '\t' || c == '\n') c = ' ';
  std::printf("%.3f\t%ld\t%s\n", seconds, peak_bytes() - base, outcome.c_str());
  return 0;
}
