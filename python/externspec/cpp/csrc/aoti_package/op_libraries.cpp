// AOTIRunnerOptions::op_libraries: custom op libraries loaded into the process before a package's
// extern-kernel file is planned, as torch.ops.load_library loads them (dlopen RTLD_NOW |
// RTLD_LOCAL: the library's static initializers register its ops and classes with the
// dispatcher). A library is loaded once per process and never unloaded (its ops stay registered,
// and code of it may be running in another thread): once per canonical path, and once per content
// (aoti_runner/model_library.h), so the same library at a second path is not loaded again (its
// TORCH_LIBRARY initializer would throw and abort the process); another build of it is refused.
#include <externspec/torch/aoti_runner.h>

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Exception.h>

#include <externspec/torch/errors.h>

#include "aoti_package/zip_reader.h"
#include "aoti_runner/elf_symbols.h"
#include "aoti_runner/model_library.h"

namespace externspec {
namespace {

// A library whose TORCH_LIBRARY defines a namespace that is defined already (a second build of a
// library loaded before, another model shipping its own copy, a namespace Python defined) throws
// from its static initializer inside dlopen, and the process aborts (issue 54 item 5: in Triton, the
// whole server). Each namespace it defines, read from its symbol table, is tried first with the
// dispatcher's own check, whose registration is undone at once: a namespace taken is a PackageError.
void check_namespaces_free(const std::string& canonical, const std::string& failure) {
  for (const std::string& ns : detail::torch_library_namespaces(canonical, failure)) {
    try {
      c10::Dispatcher::singleton().registerLibrary(ns, "externspec: " + canonical + " before dlopen");
    } catch (const c10::Error& e) {
      throw PackageError(failure + ": it defines the op namespace `" + ns + "` (TORCH_LIBRARY), which is defined "
                         "already, and loading it would abort the process (a second build of a library loaded "
                         "before? load one build of it): " + e.what_without_backtrace());
    }
  }
}

}  // namespace

void load_op_libraries(const std::vector<std::string>& paths) {
  static std::mutex mutex;
  static std::set<std::string> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& path : paths) {
    // realpath and stat, not std::filesystem (TempDir::remove in temp_dir.cpp says why).
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) == nullptr)
      throw PackageError("op library " + path + ": cannot load: " + std::strerror(errno));
    const std::string canonical = resolved;
    struct stat st {};
    if (::stat(resolved, &st) != 0 || !S_ISREG(st.st_mode))
      throw PackageError("op library " + path + ": cannot load: not a regular file");
    if (loaded.count(canonical)) continue;
    const std::string failure = "op library " + path + ": cannot load";
    detail::load_library(canonical, detail::file_record(canonical, failure), failure,
                         [&] { check_namespaces_free(canonical, failure); });
    loaded.insert(canonical);
  }
}

}  // namespace externspec
