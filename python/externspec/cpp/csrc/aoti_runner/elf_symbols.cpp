#include "aoti_runner/elf_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <string_view>

#include <externspec/messages.h>
#include <externspec/torch/errors.h>

#include "aoti_package/fixed_limits.h"

namespace externspec::detail {
namespace {

class File {
 public:
  File(const std::string& path, const std::string& label) : label_(label) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st{};
    if (fd_ < 0 || ::fstat(fd_, &st) != 0) throw PackageError(label + ": " + std::strerror(errno));
    length_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~File() { ::close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  // `size` bytes at `offset`, checked against the file's length before anything is read.
  std::string read(std::uint64_t offset, std::uint64_t size, const char* what) const {
    if (offset > length_ || size > length_ - offset)
      fail(message(Message::ELF_OUT_OF_BOUNDS, {{"what", what}, {"size", std::to_string(size)},
                                                {"offset", std::to_string(offset)}, {"length", std::to_string(length_)}}));
    std::string out(size, '\0');
    for (std::uint64_t got = 0; got < size;) {
      const ssize_t n = ::pread(fd_, out.data() + got, size - got, static_cast<off_t>(offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(n < 0 ? std::string("read: ") + std::strerror(errno) : message(Message::ELF_ENDED_EARLY));
      got += static_cast<std::uint64_t>(n);
    }
    return out;
  }

  [[noreturn]] void fail(const std::string& why) const { throw PackageError(label_ + ": " + why); }

 private:
  std::string label_;
  int fd_ = -1;
  std::uint64_t length_ = 0;
};

template <class T>
T at(const std::string& bytes, std::uint64_t offset) {
  T out;
  std::memcpy(&out, bytes.data() + offset, sizeof out);
  return out;
}

void check_table(const File& f, std::uint64_t size, const char* what) {
  if (size > fixed::elf_table_bytes)
    f.fail(message(Message::ELF_TABLE_TOO_LARGE, {{"what", what}, {"size", std::to_string(size)},
                                                  {"limit", std::to_string(fixed::elf_table_bytes)}}));
}

// Each named symbol of the library's tables of `type` (SHT_DYNSYM: what it imports and exports;
// SHT_SYMTAB: the full table, local names too): `fn(name, symbol)`. Every table bounded first.
template <class Fn>
void for_each_symbol(const File& f, std::uint32_t type, Fn&& fn) {
  const char* what = type == SHT_DYNSYM ? "dynamic symbol table" : "symbol table";
  const char* strings_what = type == SHT_DYNSYM ? "dynamic string table" : "string table";
  const std::string header = f.read(0, sizeof(Elf64_Ehdr), "header");
  const auto eh = at<Elf64_Ehdr>(header, 0);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB)
    f.fail(message(Message::ELF_NOT_ELF64));
  if (eh.e_shnum == 0) return;  // no section headers: nothing to read
  if (eh.e_shentsize != sizeof(Elf64_Shdr))
    f.fail(message(Message::ELF_ENTRY_SIZE, {{"what", "section header table"}, {"size", std::to_string(eh.e_shentsize)},
                                             {"want", std::to_string(sizeof(Elf64_Shdr))}}));
  if (eh.e_shnum > fixed::elf_sections)
    f.fail(message(Message::ELF_TOO_MANY_SECTIONS, {{"count", std::to_string(eh.e_shnum)},
                                                    {"limit", std::to_string(fixed::elf_sections)}}));
  const std::string sections = f.read(eh.e_shoff, std::uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr), "section header table");
  auto section = [&](std::uint64_t i) { return at<Elf64_Shdr>(sections, i * sizeof(Elf64_Shdr)); };
  std::map<std::uint64_t, std::string> strings;  // each string table read once
  for (std::uint64_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr symtab = section(i);
    if (symtab.sh_type != type) continue;
    if (symtab.sh_entsize != sizeof(Elf64_Sym))
      f.fail(message(Message::ELF_ENTRY_SIZE, {{"what", what}, {"size", std::to_string(symtab.sh_entsize)},
                                               {"want", std::to_string(sizeof(Elf64_Sym))}}));
    if (symtab.sh_link >= eh.e_shnum)
      f.fail(message(Message::ELF_BAD_LINK, {{"link", std::to_string(symtab.sh_link)}, {"count", std::to_string(eh.e_shnum)}}));
    check_table(f, symtab.sh_size, what);
    auto found = strings.find(symtab.sh_link);
    if (found == strings.end()) {
      const Elf64_Shdr strtab = section(symtab.sh_link);
      check_table(f, strtab.sh_size, strings_what);
      found = strings.emplace(symtab.sh_link, f.read(strtab.sh_offset, strtab.sh_size, strings_what)).first;
    }
    const std::string& names = found->second;
    const std::string syms = f.read(symtab.sh_offset, symtab.sh_size, what);
    for (std::uint64_t k = 0; k < syms.size() / sizeof(Elf64_Sym); ++k) {
      const auto sym = at<Elf64_Sym>(syms, k * sizeof(Elf64_Sym));
      if (sym.st_name == 0) continue;  // unnamed (the null symbol, sections)
      const auto bad_name = [&](Message why) {
        f.fail(message(why, {{"index", std::to_string(k)}, {"offset", std::to_string(sym.st_name)}}));
      };
      if (sym.st_name >= names.size()) bad_name(Message::ELF_NAME_OUTSIDE);
      const auto end = names.find('\0', sym.st_name);
      if (end == std::string::npos) bad_name(Message::ELF_NAME_UNTERMINATED);
      fn(std::string_view(names).substr(sym.st_name, end - sym.st_name), sym);
    }
  }
}

// The namespace of a TORCH_LIBRARY registrar object's symbol (`_ZL27TORCH_LIBRARY_static_init_ns`,
// or in an anonymous namespace `_ZN12_GLOBAL__N_1L27TORCH_LIBRARY_static_init_nsE`): the mangled
// identifier's length precedes it. "" for any other name.
std::string library_namespace(std::string_view name) {
  constexpr std::string_view kRegistrar = "TORCH_LIBRARY_static_init_";
  const auto at = name.find(kRegistrar);
  if (at == std::string_view::npos) return {};
  std::size_t digits = at;
  while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
  std::size_t length = 0;
  for (std::size_t i = digits; i < at && length < name.size(); ++i) length = length * 10 + (name[i] - '0');
  if (digits == at || length <= kRegistrar.size() || length > name.size() - at) return {};
  return std::string(name.substr(at + kRegistrar.size(), length - kRegistrar.size()));
}

}  // namespace

ElfSymbols dynamic_symbols(const std::string& file, const std::string& label) {
  const File f(file, label);
  ElfSymbols out;
  for_each_symbol(f, SHT_DYNSYM, [&](std::string_view name, const Elf64_Sym& sym) {
    if (sym.st_shndx == SHN_UNDEF) {
      if (ELF64_ST_BIND(sym.st_info) != STB_WEAK) out.imported.emplace_back(name);
    } else {
      out.exported.emplace_back(name);
    }
  });
  return out;
}

std::vector<std::string> torch_library_namespaces(const std::string& file, const std::string& label) {
  std::vector<std::string> out;
  try {
    const File f(file, label);
    for_each_symbol(f, SHT_SYMTAB, [&](std::string_view name, const Elf64_Sym& sym) {
      if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT) return;
      if (std::string ns = library_namespace(name); !ns.empty()) out.push_back(std::move(ns));
    });
  } catch (const PackageError&) {
    return {};  // a table that cannot be read says nothing: dlopen decides
  }
  return out;
}

}  // namespace externspec::detail
