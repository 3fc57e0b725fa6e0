// Reading an AOTInductor package (.pt2, a zip whose members sit under one top folder) without
// trusting it: libtorch's zip reader (caffe2::serialize::PyTorchStreamReader, miniz) reads the
// central directory; every member name is checked before any member is read, sizes are read from
// the directory and checked against a limit before a byte is read, and members are written only
// under names this code chooses, inside a private directory.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace caffe2::serialize {
class PyTorchStreamReader;
}

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

// The members of one model (names inside the package's top folder).
struct ModelMembers {
  std::string library;                  // data/aotinductor/<model>/<stem>.wrapper.so
  std::optional<std::string> spec;      // <stem>.wrapper.json (extern-kernel nodes)
  std::optional<std::string> source;    // <stem>.wrapper.cpp
  std::optional<std::string> metadata;  // <stem>.wrapper_metadata.json
  std::optional<std::string> weights;   // <stem>.wrapper_weights.blob
};

class Package {
 public:
  // Throws PackageError: not a zip archive, no top folder, a member name that is absolute or has
  // an empty, `.` or `..` component (named).
  explicit Package(const std::string& path);
  ~Package();

  // Throws PackageError naming the models the package has when there is not exactly one library.
  ModelMembers model(const std::string& model_name) const;
  bool has(const std::string& member) const;
  std::uint64_t size(const std::string& member);
  // The member's bytes; PackageError if its recorded size is over `limit` (checked before reading).
  std::string read(const std::string& member, std::uint64_t limit);
  // Writes the member to `file` (created exclusively, 0600) in chunks; the caller has checked its size.
  void extract(const std::string& member, const std::string& file);
  // `package!member`, for messages.
  std::string label(const std::string& member) const { return path_ + "!" + member; }
  std::uint64_t file_size() const { return file_size_; }

 private:
  std::string path_;
  std::uint64_t file_size_ = 0;
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader_;
  std::vector<std::string> members_;
};

}  // namespace externspec::detail
