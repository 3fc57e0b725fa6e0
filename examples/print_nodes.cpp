// Load an extern-kernel file (AOTInductor's *.wrapper.json) and print its nodes.
//
//   g++ -std=c++17 -I$(python -c "import externspec; print(externspec.get_include())") \
//       examples/print_nodes.cpp -o print_nodes
//   ./print_nodes path/to/model.wrapper.json
//
// Bad input is reported with the JSON path of the problem, e.g.
//   model.wrapper.json: $.nodes[0].node.inputs[1].arg.as_int: expected `int`, got `str`
#include <externspec/externspec.h>

#include <fstream>
#include <iostream>
#include <iterator>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " <extern-kernel file>\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << argv[1] << ": cannot open\n";
    return 1;
  }
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    auto file = externspec::decode<externspec::ExternKernelNodes>(json);
    for (std::size_t i = 0; i < file.nodes.size(); ++i) {
      const externspec::Node& node = file.nodes[i].node;
      std::cout << i << " " << file.nodes[i].name << " = " << node.target << "(";
      for (std::size_t k = 0; k < node.inputs.size(); ++k)
        std::cout << (k ? ", " : "") << node.inputs[k].name << ": " << node.inputs[k].arg.type();
      std::cout << ") -> " << node.outputs.size() << " output(s)\n";
    }
  } catch (const externspec::Error& e) {  // DecodeError or VersionError
    std::cerr << argv[1] << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
