#include "aoti_runner/torch_release.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <torch/headeronly/version.h>

#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <externspec/torch/errors.h>

namespace externspec::detail {
namespace {

enum NameKind { kImport, kExport };

struct ReleaseName {
  const char* release;
  NameKind kind;
  const char* name;
};

constexpr ReleaseName kReleaseNames[] = {
#include "aoti_runner/torch_releases.inc"
};

constexpr std::string_view kShimPrefix = "aoti_torch_";    // the C shim's functions
constexpr std::string_view kEntryPrefix = "AOTInductor";  // the model library's C entry points

struct Symbols {
  std::vector<std::string> imported;  // undefined, not weak, `aoti_torch_*`
  std::vector<std::string> exported;  // defined, `AOTInductor*`
};

// `size` bytes at `offset` of `in` (whose length is `length`), or nullopt when out of bounds. A model
// library holds its weights unless they are in a blob: only its headers and symbol tables are read.
std::optional<std::vector<char>> read_at(std::ifstream& in, std::uint64_t length, std::uint64_t offset,
                                         std::uint64_t size) {
  if (offset > length || size > length - offset) return std::nullopt;
  std::vector<char> out(size);
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in.read(out.data(), static_cast<std::streamsize>(size))) return std::nullopt;
  return out;
}

template <class T>
std::optional<T> read_struct(std::ifstream& in, std::uint64_t length, std::uint64_t offset) {
  auto bytes = read_at(in, length, offset, sizeof(T));
  if (!bytes) return std::nullopt;
  T out;
  std::memcpy(&out, bytes->data(), sizeof out);
  return out;
}

// The shim functions and entry points in the dynamic symbol table of the ELF64 shared library `file`
// (none when it is not one, or its tables are out of bounds).
Symbols dynamic_symbols(const std::string& file) {
  Symbols out;
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return out;
  const auto length = static_cast<std::uint64_t>(in.tellg());
  auto eh = read_struct<Elf64_Ehdr>(in, length, 0);
  if (!eh || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_shentsize != sizeof(Elf64_Shdr))
    return out;
  auto section = [&](std::uint64_t i) -> std::optional<Elf64_Shdr> {
    if (i >= eh->e_shnum) return std::nullopt;
    return read_struct<Elf64_Shdr>(in, length, eh->e_shoff + i * sizeof(Elf64_Shdr));
  };
  for (std::uint64_t i = 0; i < eh->e_shnum; ++i) {
    auto symtab = section(i);
    if (!symtab || symtab->sh_type != SHT_DYNSYM || symtab->sh_entsize != sizeof(Elf64_Sym)) continue;
    auto strtab = section(symtab->sh_link);
    auto syms = read_at(in, length, symtab->sh_offset, symtab->sh_size);
    auto strs = strtab ? read_at(in, length, strtab->sh_offset, strtab->sh_size) : std::nullopt;
    if (!syms || !strs) return {};
    for (std::uint64_t k = 0; k < syms->size() / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, syms->data() + k * sizeof sym, sizeof sym);
      if (sym.st_name >= strs->size()) continue;
      const char* name = strs->data() + sym.st_name;
      const std::string_view view(name, strnlen(name, strs->size() - sym.st_name));
      if (sym.st_shndx == SHN_UNDEF) {
        if (ELF64_ST_BIND(sym.st_info) != STB_WEAK && view.substr(0, kShimPrefix.size()) == kShimPrefix)
          out.imported.emplace_back(view);
      } else if (view.substr(0, kEntryPrefix.size()) == kEntryPrefix) {
        out.exported.emplace_back(view);
      }
    }
  }
  return out;
}

// "2.13" < "2.9" as releases, not as text.
std::pair<int, int> release_key(std::string_view r) {
  auto dot = r.find('.');
  return {std::stoi(std::string(r.substr(0, dot))), std::stoi(std::string(r.substr(dot + 1)))};
}

// The newer of two releases ("" is older than any).
std::string newer(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return release_key(a) < release_key(b) ? b : a;
}

// The libraries loaded in this process, by the names the dynamic loader knows them by (the
// program itself, which has none, left out).
std::vector<std::string> loaded_libraries() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
        return 0;
      },
      &names);
  return names;
}

// Whether a library loaded in this process defines `name`: an op library given to the runner
// (op_libraries) or loaded before (torch.ops.load_library, RTLD_LOCAL: not in the global scope),
// whose C shims a model compiled with aot_inductor.custom_ops_to_c_shims calls. Each is opened
// with RTLD_NOLOAD (nothing is loaded) outside dl_iterate_phdr, which holds the loader's lock.
bool loaded_library_defines(const std::vector<std::string>& libraries, const std::string& name) {
  dlerror();
  if (dlsym(RTLD_DEFAULT, name.c_str()) != nullptr) return true;
  for (const std::string& library : libraries) {
    void* handle = dlopen(library.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    const bool found = dlsym(handle, name.c_str()) != nullptr;
    dlclose(handle);
    if (found) return true;
  }
  return false;
}

}  // namespace

void check_torch_release(const std::string& file, const std::string& label) {
  // libtorch.so and what it links (libtorch_cpu, and libtorch_cuda in a CUDA build) export the shim;
  // this process has it loaded (es.cpp links it), so this finds it without loading anything.
  void* torch = dlopen("libtorch.so", RTLD_LAZY | RTLD_NOLOAD);
  if (torch == nullptr) return;
  const Symbols symbols = dynamic_symbols(file);
  std::vector<std::string> missing;
  for (const std::string& name : symbols.imported) {
    dlerror();
    if (dlsym(torch, name.c_str()) == nullptr) missing.push_back(name);
  }
  dlclose(torch);
  if (missing.empty()) return;
  // A function another loaded library provides is no evidence of another torch: only names that
  // no library here resolves are.
  const std::vector<std::string> libraries = loaded_libraries();
  std::erase_if(missing, [&](const std::string& name) { return loaded_library_defines(libraries, name); });
  if (missing.empty()) return;
  std::map<std::string, std::string> since[2];
  for (const auto& [release, kind, name] : kReleaseNames) since[kind].emplace(name, release);
  auto release_of = [&](NameKind kind, const std::string& name) {
    auto it = since[kind].find(name);
    return it == since[kind].end() ? std::string() : it->second;
  };
  std::string compiled, needed, listed;  // the library's release, the one its missing functions need
  for (const std::string& name : symbols.imported) compiled = newer(compiled, release_of(kImport, name));
  for (const std::string& name : symbols.exported) compiled = newer(compiled, release_of(kExport, name));
  for (const std::string& name : missing) {
    const std::string release = release_of(kImport, name);
    needed = newer(needed, release);
    listed += (listed.empty() ? "" : ", ") + name +
              (release.empty() ? " (in no torch release externspec knows)" : " (torch " + release + ")");
  }
  const std::string runtime =
      "torch " + std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
  if (needed.empty())  // no release has them: a custom op's C shims, or a torch externspec does not know
    throw PackageError(label + ": its model library calls C-shim functions that neither " + runtime +
                       " nor any library loaded in this process provides: " + listed +
                       "; if they are a custom op library's C shims (aot_inductor.custom_ops_to_c_shims), load "
                       "that library first (op_libraries), else the library was compiled by a torch other than "
                       "the releases externspec knows: run it under the torch that compiled it");
  const std::string compiled_by = "torch " + compiled + " or later";
  const std::string run_under = "torch " + needed + " or later";
  throw PackageError(label + ": compiled by " + compiled_by + ", and this is " + runtime +
                     ": its model library calls C-shim functions " + runtime + " does not have: " + listed +
                     "; run it under " + run_under + ", or compile it again with " + runtime);
}

}  // namespace externspec::detail
