// The private folder a package's files are extracted into.
#pragma once

#include <string>
#include <utility>

namespace externspec::detail {

// A fresh directory (mkdtemp, mode 0700) under $TMPDIR or /tmp, removed with its contents by
// remove() and by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir() { remove(); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  void remove() noexcept;
  // Hands the directory over to the caller, who must remove it.
  std::string release() { return std::exchange(path_, {}); }

 private:
  std::string path_;
};

}  // namespace externspec::detail
