// AOTIRunnerOptions::op_libraries: custom op libraries loaded into the process before a package's
// extern-kernel file is planned, as torch.ops.load_library loads them (dlopen RTLD_NOW |
// RTLD_LOCAL: the library's static initializers register its ops and classes with the
// dispatcher). A library is loaded once per process and never unloaded (its ops stay registered,
// and code of it may be running in another thread): once per canonical path, and once per content
// (aoti_runner/model_library.h), so the same library at a second path is not loaded again (its
// TORCH_LIBRARY initializer would throw and abort the process).
#include <externspec/torch/aoti_runner.h>

#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>

#include <externspec/torch/errors.h>

#include "aoti_package/package.h"
#include "aoti_runner/model_library.h"

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
    const std::string failure = "op library " + path + ": cannot load";
    detail::load_library(canonical.string(), detail::file_record(canonical.string(), failure), failure);
    loaded.insert(canonical.string());
  }
}

}  // namespace externspec
