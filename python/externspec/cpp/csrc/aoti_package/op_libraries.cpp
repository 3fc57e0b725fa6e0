// AOTIRunnerOptions::op_libraries: custom op libraries loaded into the process before a package's
// extern-kernel file is planned, as torch.ops.load_library loads them (dlopen RTLD_NOW |
// RTLD_LOCAL: the library's static initializers register its ops and classes with the
// dispatcher). A library is loaded once per process, by canonical path, and never unloaded: its
// ops stay registered, and code of it may be running in another thread.
#include <externspec/torch/aoti_runner.h>

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>

#include <externspec/torch/errors.h>

namespace externspec {

void load_op_libraries(const std::vector<std::string>& paths) {
  static std::mutex mutex;
  static std::set<std::string> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& path : paths) {
    std::error_code ec;
    const std::filesystem::path canonical = std::filesystem::canonical(path, ec);
    if (ec) throw PackageError("op library " + path + ": cannot load: " + ec.message());
    if (!std::filesystem::is_regular_file(canonical, ec))
      throw PackageError("op library " + path + ": cannot load: not a regular file");
    if (loaded.count(canonical.string())) continue;
    dlerror();
    if (dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
      const char* why = dlerror();
      throw PackageError("op library " + path + ": cannot load: " + (why ? why : "dlopen failed"));
    }
    loaded.insert(canonical.string());
  }
}

}  // namespace externspec
