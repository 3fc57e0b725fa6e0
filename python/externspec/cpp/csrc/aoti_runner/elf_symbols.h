// The names a model library imports and exports, read from its ELF section headers and dynamic
// symbol table only (not its code or weights), each table bounded and checked against the file's size
// before it is read. Python's twin is externspec/elf_symbols.py (tests/aoti/test_elf_symbols.py runs one corpus
// over both): the same names, or the same refusal.
#pragma once

#include <string>
#include <vector>

namespace externspec::detail {

struct ElfSymbols {
  std::vector<std::string> imported;  // undefined, not weak, named
  std::vector<std::string> exported;  // defined, named
};

// The dynamic symbols of the ELF64 little-endian shared library `file`; PackageError starting
// `label` when it is not one or a table is out of bounds, over a limit (limits.def's elf_sections,
// elf_table_bytes) or malformed. A library without section headers has none.
ElfSymbols dynamic_symbols(const std::string& file, const std::string& label);

// The op namespaces the library defines with TORCH_LIBRARY, from the registrar objects of its full
// symbol table (`TORCH_LIBRARY_static_init_<ns>`); none when it has no such table (stripped) or the
// table cannot be read (then nothing is known: dlopen decides).
std::vector<std::string> torch_library_namespaces(const std::string& file, const std::string& label);

}  // namespace externspec::detail
