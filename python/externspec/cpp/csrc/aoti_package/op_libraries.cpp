// AOTIRunnerOptions::op_libraries: custom op libraries loaded into the process before a package's
// extern-kernel file is planned, as torch.ops.load_library loads them (dlopen RTLD_NOW |
// RTLD_LOCAL: the library's static initializers register its ops and classes with the
// dispatcher). A library is loaded once per process and never unloaded (its ops stay registered,
// and code of it may be running in another thread): once per canonical path, and once per content
// (aoti_runner/model_library.h), so the same library at a second path is not loaded again (its
// TORCH_LIBRARY initializer would throw and abort the process).
#include <externspec/torch/aoti_runner.h>

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include <externspec/torch/errors.h>

#include "aoti_package/zip_reader.h"
#include "aoti_runner/model_library.h"

namespace externspec {

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
    detail::load_library(canonical, detail::file_record(canonical, failure), failure);
    loaded.insert(canonical);
  }
}

}  // namespace externspec
