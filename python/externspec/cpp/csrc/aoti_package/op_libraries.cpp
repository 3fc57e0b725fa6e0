// AOTIRunnerOptions::op_libraries: custom op libraries loaded into the process before a package's
// extern-kernel file is planned, as torch.ops.load_library loads them (dlopen RTLD_NOW |
// RTLD_LOCAL: the library's static initializers register its ops and classes with the
// dispatcher). A library is loaded once per process, by canonical path, and never unloaded: its
// ops stay registered, and code of it may be running in another thread.
#include <externspec/torch/aoti_runner.h>

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include <externspec/torch/errors.h>

namespace externspec {

void load_op_libraries(const std::vector<std::string>& paths) {
  static std::mutex mutex;
  static std::set<std::string> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& path : paths) {
    // realpath and stat, not std::filesystem (TempDir::remove in package.cpp says why).
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) == nullptr)
      throw PackageError("op library " + path + ": cannot load: " + std::strerror(errno));
    const std::string canonical = resolved;
    struct stat st {};
    if (::stat(resolved, &st) != 0 || !S_ISREG(st.st_mode))
      throw PackageError("op library " + path + ": cannot load: not a regular file");
    if (loaded.count(canonical)) continue;
    dlerror();
    if (dlopen(resolved, RTLD_NOW | RTLD_LOCAL) == nullptr) {
      const char* why = dlerror();
      throw PackageError("op library " + path + ": cannot load: " + (why ? why : "dlopen failed"));
    }
    loaded.insert(canonical);
  }
}

}  // namespace externspec
