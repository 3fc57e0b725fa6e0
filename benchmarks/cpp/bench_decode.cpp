// Decode the same ExportedProgram JSON file repeatedly and print the times (benchmarks/bench_cpp_decode.py).
// One source, three decoders and a bare parse, chosen at compile time:
//   -DDECODER_TORCH     torch's generated_serialization_types.h (nlohmann::json::parse + from_json)
//   -DDECODER_NLOHMANN  externspec::decode<ExportedProgram> with the default (nlohmann) backend
//   -DDECODER_SIMDJSON  externspec::decode<ExportedProgram, SimdjsonBackend>
//   -DPARSE_SIMDJSON    simdjson's DOM parse of the same bytes, nothing read from it (nodes=0): the
//                       floor of the simdjson backend (one parser reused, as the backend does)
//   -DPARSE_NLOHMANN    nlohmann's SAX parse of the same bytes into a handler that keeps nothing
//                       (nodes=0): the floor of the default backend, which builds its tape from it
// usage: bench_decode <file> <iterations>   ->   "nodes=<n> best_ms=<x> median_ms=<y>"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(DECODER_TORCH)
#include <torch/csrc/utils/generated_serialization_types.h>
static std::size_t decode_nodes(const std::string& json) {
  auto program = nlohmann::json::parse(json).get<torch::_export::ExportedProgram>();
  return program.get_graph_module().get_graph().get_nodes().size();
}
#elif defined(PARSE_SIMDJSON)
#include <simdjson.h>
static std::size_t decode_nodes(const std::string& json) {
  static simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json.data(), json.size()).get(root) != simdjson::SUCCESS) throw std::runtime_error("invalid JSON");
  return 0;
}
#elif defined(PARSE_NLOHMANN)
#include <nlohmann/json.hpp>
struct Discard {  // every SAX event accepted and dropped
  using json = nlohmann::json;
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(json::number_integer_t) { return true; }
  bool number_unsigned(json::number_unsigned_t) { return true; }
  bool number_float(json::number_float_t, const json::string_t&) { return true; }
  bool string(json::string_t&) { return true; }
  bool binary(json::binary_t&) { return true; }
  bool key(json::string_t&) { return true; }
  bool start_object(std::size_t) { return true; }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
};
static std::size_t decode_nodes(const std::string& json) {
  Discard handler;
  if (!nlohmann::json::sax_parse(json.data(), json.data() + json.size(), &handler))
    throw std::runtime_error("invalid JSON");
  return 0;
}
#else
#include "backend.h"
static std::size_t decode_nodes(const std::string& json) {
  auto program = externspec::decode<externspec::ExportedProgram, Backend>(json);
  return program.graph_module.graph.nodes.size();
}
#endif

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <file> <iterations>\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int iterations = std::stoi(argv[2]);
  std::vector<double> ms;
  std::size_t nodes = 0;
  for (int i = 0; i < iterations; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    nodes = decode_nodes(json);
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("nodes=%zu best_ms=%.3f median_ms=%.3f\n", nodes, ms.front(), ms[ms.size() / 2]);
  return 0;
}
