#include "aoti_runner/torch_release.h"

#include <dlfcn.h>
#include <link.h>

#include <torch/headeronly/version.h>

#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <externspec/torch/errors.h>

#include "aoti_runner/elf_symbols.h"

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

// The shim functions and entry points among the library's dynamic symbols (elf_symbols.h: its
// tables bounded and checked, a malformed one a PackageError naming `label`).
Symbols release_symbols(const std::string& file, const std::string& label) {
  const ElfSymbols all = detail::dynamic_symbols(file, label);
  Symbols out;
  for (const auto& name : all.imported)
    if (std::string_view(name).substr(0, kShimPrefix.size()) == kShimPrefix) out.imported.push_back(name);
  for (const auto& name : all.exported)
    if (std::string_view(name).substr(0, kEntryPrefix.size()) == kEntryPrefix) out.exported.push_back(name);
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
  const Symbols symbols = release_symbols(file, label);
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
