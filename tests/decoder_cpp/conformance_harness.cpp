// Conformance harness: decodes documents with externspec's C++ header and prints what happened,
// so that the tests can compare it with Python. Built once per backend (see tests/decoder_cpp/conftest.py).
//
// stdin: one request per line, `<Type>\t<strict 0|1>\t<path of a JSON file>`.
// stdout: one line per request:
//   OK\t<encode(decoded)>            (compact JSON has no raw newlines)
//   DecodeError\t<kind of the first problem>\t<its path>\t<what()>
//   VersionError\t<path()>\t<key()>\t<what()>
#include <externspec/externspec.h>
#ifdef HARNESS_SIMDJSON
#include <externspec/backend_simdjson.h>
using Backend = externspec::SimdjsonBackend;
#else
using Backend = externspec::NlohmannBackend;
#endif

#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

namespace {

template <class T>
std::string roundtrip(const std::string& json, bool strict) {
  return externspec::encode(externspec::decode<T, Backend>(json, strict));
}

const std::map<std::string, std::function<std::string(const std::string&, bool)>>& types() {
  static const std::map<std::string, std::function<std::string(const std::string&, bool)>> t = {
      {"ExternKernelNodes", roundtrip<externspec::ExternKernelNodes>},
      {"ExportedProgram", roundtrip<externspec::ExportedProgram>},
      {"ExternKernelNode", roundtrip<externspec::ExternKernelNode>},
      {"Node", roundtrip<externspec::Node>},
      {"Argument", roundtrip<externspec::Argument>},
      {"Graph", roundtrip<externspec::Graph>},
      {"TensorMeta", roundtrip<externspec::TensorMeta>},
      {"Device", roundtrip<externspec::Device>},
      {"SymExprHint", roundtrip<externspec::SymExprHint>},
      {"PayloadConfig", roundtrip<externspec::PayloadConfig>},
      {"AOTInductorModelPickleData", roundtrip<externspec::AOTInductorModelPickleData>},
  };
  return t;
}

}  // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream fields(line);
    std::string type, strict, path;
    std::getline(fields, type, '\t');
    std::getline(fields, strict, '\t');
    std::getline(fields, path);
    auto it = types().find(type);
    if (it == types().end()) {
      std::cout << "HarnessError\tunknown type " << type << std::endl;
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      std::string encoded = it->second(json, strict == "1");
      std::cout << "OK\t" << encoded << "\n";
    } catch (const externspec::DecodeError& e) {
      std::cout << "DecodeError\t" << e.errors().front().kind << "\t" << e.path() << "\t" << e.what() << "\n";
    } catch (const externspec::VersionError& e) {
      std::cout << "VersionError\t" << e.path() << "\t" << e.key() << "\t" << e.what() << "\n";
    }
    std::cout.flush();
  }
  return 0;
}
