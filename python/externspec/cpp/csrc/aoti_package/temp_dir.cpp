#include "aoti_package/temp_dir.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <externspec/torch/errors.h>

namespace externspec::detail {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/externspec-aoti-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    throw PackageError("cannot create a temporary directory from " + pattern + ": " + std::strerror(errno));
  path_ = pattern;  // mkdtemp creates it with mode 0700
}

void TempDir::remove() noexcept {
  if (path_.empty()) return;
  // POSIX, not std::filesystem: the runtime calls no C++ standard-library function that torch's
  // libraries also export (tests/cpp/test_cpp_symbols.py). They carry copies of std::filesystem, and a
  // process that loaded torch first binds such a call to torch's copy; torch 2.11's libtorch.so has
  // a remove_all whose recursive_directory_iterator is an unresolved weak symbol, address 0.
  ::nftw(path_.c_str(), [](const char* file, const struct stat*, int, struct FTW*) {
    ::remove(file);  // what cannot be removed stays; the walk goes on
    return 0;
  }, 16, FTW_DEPTH | FTW_PHYS);
  path_.clear();
}

}  // namespace externspec::detail
