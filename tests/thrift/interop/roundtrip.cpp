// Apache Thrift's C++ library (libthrift) reads each document and writes it back, with the types
// `thrift --gen cpp` generates from schema/externspec.thrift.
// Usage: roundtrip JOBS; JOBS has one line per document: TYPE<TAB>PROTOCOL<TAB>INPUT<TAB>OUTPUT,
// PROTOCOL `binary` or `compact`.
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include "externspec_types.h"

using apache::thrift::protocol::TBinaryProtocol;
using apache::thrift::protocol::TCompactProtocol;
using apache::thrift::protocol::TProtocol;
using apache::thrift::transport::TMemoryBuffer;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::shared_ptr<TProtocol> protocol(const std::string& name, std::shared_ptr<TMemoryBuffer> buffer) {
  if (name == "binary") return std::make_shared<TBinaryProtocol>(buffer);
  if (name == "compact") return std::make_shared<TCompactProtocol>(buffer);
  throw std::runtime_error("unknown protocol " + name);
}

template <class T>
std::string round_trip(const std::string& protocol_name, const std::string& data) {
  auto in = std::make_shared<TMemoryBuffer>(reinterpret_cast<uint8_t*>(const_cast<char*>(data.data())),
                                            static_cast<uint32_t>(data.size()));
  T doc;
  doc.read(protocol(protocol_name, in).get());
  auto out = std::make_shared<TMemoryBuffer>();
  doc.write(protocol(protocol_name, out).get());
  return out->getBufferAsString();
}

using RoundTrip = std::function<std::string(const std::string&, const std::string&)>;

// The document types of the conformance corpus and of torch's files.
const std::map<std::string, RoundTrip> kTypes = {
    {"ExternKernelNodes", round_trip<externspec::ExternKernelNodes>},
    {"ExportedProgram", round_trip<externspec::ExportedProgram>},
    {"Node", round_trip<externspec::Node>},
    {"Graph", round_trip<externspec::Graph>},
    {"Device", round_trip<externspec::Device>},
    {"TensorMeta", round_trip<externspec::TensorMeta>},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: roundtrip JOBS\n";
    return 2;
  }
  std::istringstream jobs(read_file(argv[1]));
  std::string line;
  while (std::getline(jobs, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string type, protocol_name, input, output;
    std::getline(fields, type, '\t');
    std::getline(fields, protocol_name, '\t');
    std::getline(fields, input, '\t');
    std::getline(fields, output, '\t');
    auto it = kTypes.find(type);
    if (it == kTypes.end()) {
      std::cerr << "unknown document type " << type << "\n";
      return 1;
    }
    std::ofstream(output, std::ios::binary) << it->second(protocol_name, read_file(input));
  }
  return 0;
}
