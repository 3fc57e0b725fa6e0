// Peak memory of one decode (benchmarks/bench_hostile.py): the file is read into a string of its
// exact size, then decoded once; the peak RSS growth over the state after the read is printed (the
// kernel's high-water mark VmHWM is reset through /proc/self/clear_refs first: getrusage's ru_maxrss
// never goes down, so a peak reached before the decode would hide the decode's own).
// One source, three decoders, chosen at compile time:
//   -DDECODER_TORCH     torch's generated_serialization_types.h (nlohmann::json::parse + from_json)
//   -DDECODER_NLOHMANN  externspec::decode<T> with the default (nlohmann) backend
//   -DDECODER_SIMDJSON  externspec::decode<T, SimdjsonBackend>
// usage: peak_rss <ExternKernelNodes|Argument|Node> <file>   ->   "<seconds>\t<peak growth bytes>\t<outcome>"
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
using Node = torch::_export::Node;
#else
#include "backend.h"
template <class T>
static void decode(const std::string& json) {
  T value = externspec::decode<T, Backend>(json);
  (void)value;
}
using ExternKernelNodes = externspec::ExternKernelNodes;
using Argument = externspec::Argument;
using Node = externspec::Node;
#endif

// One field of /proc/self/status in bytes (the kernel writes it in kB).
static long status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.compare(0, field.size() + 1, field + ":") == 0) return std::stol(line.substr(field.size() + 1)) * 1024L;
  return -1;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <ExternKernelNodes|Argument|Node> <file>\n", argv[0]);
    return 2;
  }
  const std::string type = argv[1];
  std::ifstream in(argv[2], std::ios::binary | std::ios::ate);
  std::string json(static_cast<std::size_t>(in.tellg()), '\0');
  in.seekg(0);
  in.read(json.data(), static_cast<std::streamsize>(json.size()));
  std::ofstream("/proc/self/clear_refs") << "5";
  const long base = status_bytes("VmRSS");
  const auto start = std::chrono::steady_clock::now();
  std::string outcome = "accepted";
  try {
    if (type == "ExternKernelNodes")
      decode<ExternKernelNodes>(json);
    else if (type == "Argument")
      decode<Argument>(json);
    else if (type == "Node")
      decode<Node>(json);
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
  std::printf("%.3f\t%ld\t%s\n", seconds, status_bytes("VmHWM") - base, outcome.c_str());
  return 0;
}
