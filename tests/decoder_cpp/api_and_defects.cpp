// Two jobs in one binary (so that the tests compile once):
//   api_and_defects api       self-checks of the generated C++ API; prints one "ok <check>" per check
//   api_and_defects defects   stdin lines `<path>`; decodes each ExternKernelNodes file with torch's
//                             generated_serialization_types.h AND externspec's header, printing
//                             `torch\t<OK|ERR>\t<dump or what()>` then `ours\t<OK|ERR>\t<encode or what()>`
#include <torch/csrc/utils/generated_serialization_types.h>

#include <externspec/externspec.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                       \
    }                                                                 \
  } while (0)

namespace es = externspec;

static int api_checks() {
  // Unions: the tag follows the member that is set; the wrong accessor throws, naming both.
  auto a = es::Argument::make_as_int(3);
  CHECK(a.tag() == es::Argument::Tag::as_int && a.type() == "as_int" && a.is_as_int() && a.as_int() == 3);
  try {
    (void)a.as_tensor();
    CHECK(false);
  } catch (const es::UnionAccessError& e) {
    CHECK(std::string(e.what()) == "Argument holds `as_int`, not `as_tensor`");
  }
  std::puts("ok union_checked_accessors");

  // Recursion: a graph inside an argument, boxed, copies deeply.
  es::GraphArgument ga;
  ga.name = "sub";
  ga.graph->nodes.emplace_back();
  ga.graph->nodes[0].target = "torch.ops.aten.sin.default";
  auto g = es::Argument::make_as_graph(ga);
  es::Argument copy = g;
  copy.as_graph().graph->nodes[0].target = "changed";
  CHECK(g.as_graph().graph->nodes[0].target == "torch.ops.aten.sin.default");
  CHECK(es::decode<es::Argument>(es::encode(g)).as_graph().graph->nodes.size() == 1);
  std::puts("ok recursive_graph_in_argument");

  // Enums keep the schema's numbering (LONG is 5 here, 4 in c10) and have name tables.
  CHECK(static_cast<int>(es::ScalarType::LONG) == 5 && static_cast<int>(es::ScalarType::UINT16) == 28);
  CHECK(es::to_string(es::ScalarType::LONG) == "LONG" && es::to_string(es::Layout::_mkldnn) == "_mkldnn");
  CHECK(es::enum_from_string<es::MemoryFormat>("ChannelsLast") == es::MemoryFormat::ChannelsLast);
  CHECK(!es::enum_from_string<es::MemoryFormat>("Nope").has_value());
  CHECK(es::to_string(static_cast<es::ScalarType>(14)).empty());
  std::puts("ok enums");

  // Constants from the IDL.
  std::printf("ok constants %lld.%lld %lld %s\n", static_cast<long long>(es::SCHEMA_VERSION.major),
              static_cast<long long>(es::SCHEMA_VERSION.minor), static_cast<long long>(es::TORCH_EXPORT_SCHEMA_MAJOR),
              std::string(es::IDL_CHECKSUM).c_str());

  // Errors are std::exceptions with every problem listed.
  try {
    es::decode<es::Device>(R"({"type": 1, "index": "x"})");
    CHECK(false);
  } catch (const std::exception& e) {
    auto& d = dynamic_cast<const es::DecodeError&>(e);
    CHECK(d.errors().size() == 2 && d.errors()[1].path == "$.index" && d.errors()[1].kind == "type" && d.path() == "$.type");
    CHECK(std::string(e.what()) == "$.type: expected `str`, got `int` (and 1 more)");
  }
  std::puts("ok decode_error");

  // Ordered maps keep insertion order and Python's repeated-key rule.
  es::OrderedMap<std::int64_t> m;
  m.insert_or_assign("b", 1);
  m.insert_or_assign("a", 2);
  m.insert_or_assign("b", 3);
  CHECK(m.size() == 2 && m.begin()->first == "b" && m.at("b") == 3);
  std::puts("ok ordered_map");
  return 0;
}

template <class F>
static void report(const char* who, F&& f) {
  try {
    std::string out = f();
    std::cout << who << "\tOK\t" << out << "\n";
  } catch (const std::exception& e) {
    std::cout << who << "\tERR\t" << e.what() << "\n";
  }
}

static int defects() {
  std::string path;
  while (std::getline(std::cin, path)) {
    std::ifstream in(path, std::ios::binary);
    std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    report("torch", [&] {
      auto nodes = nlohmann::json::parse(json).get<torch::_export::ExternKernelNodes>();
      std::string decoded = "decoded";
      try {
        return decoded + " " + nlohmann::json(nodes).dump();
      } catch (const std::exception& e) {
        return decoded + ", dump failed: " + e.what();
      }
    });
    report("ours", [&] { return es::encode(es::decode<es::ExternKernelNodes>(json)); });
    std::cout.flush();
  }
  return 0;
}

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "api") return api_checks();
  if (mode == "defects") return defects();
  std::fprintf(stderr, "usage: %s api|defects\n", argv[0]);
  return 2;
}
