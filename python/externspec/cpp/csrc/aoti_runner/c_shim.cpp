#include "aoti_runner/c_shim.h"

#include <dlfcn.h>
#include <elf.h>

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

struct ShimRelease {
  const char* release;
  const char* function;
};

constexpr ShimRelease kShimReleases[] = {
#include "aoti_runner/c_shim_releases.inc"
};

constexpr std::string_view kShimPrefix = "aoti_torch_";

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

// The names of the undefined, non-weak `aoti_torch_*` symbols in the dynamic symbol table of the
// ELF64 shared library `file` (empty when it is not one, or its tables are out of bounds).
std::vector<std::string> imported_shim_functions(const std::string& file) {
  std::vector<std::string> out;
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
    if (!syms || !strs) return out;
    for (std::uint64_t k = 0; k < syms->size() / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, syms->data() + k * sizeof sym, sizeof sym);
      if (sym.st_shndx != SHN_UNDEF || ELF64_ST_BIND(sym.st_info) == STB_WEAK || sym.st_name >= strs->size())
        continue;
      const char* name = strs->data() + sym.st_name;
      std::string_view view(name, strnlen(name, strs->size() - sym.st_name));
      if (view.substr(0, kShimPrefix.size()) == kShimPrefix) out.emplace_back(view);
    }
  }
  return out;
}

std::string runtime_release() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
}

// "2.13" < "2.9" as releases, not as text.
std::pair<int, int> release_key(std::string_view r) {
  auto dot = r.find('.');
  return {std::stoi(std::string(r.substr(0, dot))), std::stoi(std::string(r.substr(dot + 1)))};
}

}  // namespace

void check_c_shim(const std::string& file, const std::string& label) {
  // libtorch.so and what it links (libtorch_cpu, and libtorch_cuda in a CUDA build) export the shim;
  // this process has it loaded (es.cpp links it), so this finds it without loading anything.
  void* torch = dlopen("libtorch.so", RTLD_LAZY | RTLD_NOLOAD);
  if (torch == nullptr) return;
  std::vector<std::string> missing;
  for (const std::string& name : imported_shim_functions(file)) {
    dlerror();
    if (dlsym(torch, name.c_str()) == nullptr) missing.push_back(name);
  }
  dlclose(torch);
  if (missing.empty()) return;
  std::map<std::string, std::string> since;
  for (const auto& [release, function] : kShimReleases) since.emplace(function, release);
  std::string newest, listed;
  for (const std::string& name : missing) {
    auto it = since.find(name);
    const std::string release = it == since.end() ? "" : it->second;
    if (!release.empty() && (newest.empty() || release_key(newest) < release_key(release))) newest = release;
    listed += (listed.empty() ? "" : ", ") + name +
              (release.empty() ? " (in no torch release externspec knows)" : " (torch " + release + ")");
  }
  const std::string runtime = "torch " + runtime_release();
  const std::string compiled_by = newest.empty() ? "a torch other than the releases externspec knows"
                                                 : "torch " + newest + " or later";
  throw PackageError(label + ": compiled by " + compiled_by + ", and this is " + runtime +
                     ": its model library calls C-shim functions " + runtime + " does not have: " + listed +
                     "; run it under " + (newest.empty() ? "the torch that compiled it" : compiled_by) +
                     ", or compile it again with " + runtime);
}

}  // namespace externspec::detail
