// The zip reader: a zip archive whose members sit under one top folder (an AOTInductor package, a
// .pt2; which members make a model is package_layout.h's) read without trusting it, from a file or
// from memory. The zip's central directory is read and checked here before libtorch's zip reader
// (caffe2::serialize::PyTorchStreamReader, miniz) is constructed, as that reader inflates
// `.data/version` whole while it opens: every member name (absolute names, `.`/`..`/empty
// components, members outside the top folder, a name recorded twice) and every recorded size
// (members torch's reader reads as it opens, stored members whose two sizes disagree) is checked
// first, naming the member. A member's bytes are then read up to its recorded size only and
// verified against that size and its CRC-32 before use (torch's reader checks neither), and
// members are written only under names this code chooses, inside a private directory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace caffe2::serialize {
class PyTorchStreamReader;
class ReadAdapterInterface;
}

namespace externspec::detail {

// What the central directory records about a member.
struct MemberRecord {
  std::uint64_t size = 0;  // uncompressed
  std::uint32_t crc = 0;
};

// The size and CRC-32 of the file at `file`, as a member's record (an op library's, to find the same
// bytes loaded before); PackageError starting `failure` if it cannot be read.
MemberRecord file_record(const std::string& file, const std::string& failure);

// The members of a zip archive held in memory (a torchbind object's TorchScript archive, which
// torch's unpickler opens with the same zip reader), by name inside its top folder, checked as a
// package's directory is (ZipArchive). Throws PackageError naming `label`.
std::map<std::string, MemberRecord> archive_members(std::string_view bytes, const std::string& label);

class ZipArchive {
 public:
  // Throws PackageError: not a zip archive, no top folder, a member name that is absolute, has an
  // empty, `.` or `..` component, lies outside the top folder or is recorded twice, or a member
  // recorded with sizes over what the reader may take (each named). The file is opened once; torch's
  // reader reads it through the same descriptor.
  explicit ZipArchive(const std::string& path);
  // The same checks on an archive in memory, named `label` in messages; `bytes` must outlive this.
  ZipArchive(std::string_view bytes, const std::string& label);
  ~ZipArchive();

  // Opens torch's reader (read and extract do, if not yet): PackageError if it refuses the archive.
  void open();
  bool has(const std::string& member) const { return members_.count(member) > 0; }
  // Every member, by name inside the top folder, as the checks read them (es.cpp.package_members).
  const std::map<std::string, MemberRecord>& members() const { return members_; }
  // The names the directory records, top folder included, in its order (what the archive is:
  // aoti_package/file_kind.h).
  const std::vector<std::string>& names() const { return names_; }
  const MemberRecord& record(const std::string& member) const;
  std::uint64_t size(const std::string& member) const { return record(member).size; }
  // The member's bytes, verified against its recorded size and CRC-32; PackageError if its
  // recorded size is over `limit` (checked before reading).
  std::string read(const std::string& member, std::uint64_t limit);
  // Writes the member to `file` (created exclusively, 0600) in chunks and verifies its size and
  // CRC-32; the caller has checked its size.
  void extract(const std::string& member, const std::string& file);
  // `archive!member`, for messages.
  std::string label(const std::string& member) const { return path_ + "!" + member; }
  // The archive (its path or label), for messages.
  const std::string& name() const { return path_; }
  std::uint64_t file_size() const { return file_size_; }

 private:
  ZipArchive(std::shared_ptr<caffe2::serialize::ReadAdapterInterface> source, const std::string& label);
  void verify(const std::string& member, std::uint64_t got_size, std::uint32_t got_crc) const;
  caffe2::serialize::PyTorchStreamReader& reader();

  std::string path_;
  std::uint64_t file_size_ = 0;
  std::shared_ptr<caffe2::serialize::ReadAdapterInterface> source_;
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader_;
  std::map<std::string, MemberRecord> members_;  // by name inside the top folder
  std::vector<std::string> names_;
};

}  // namespace externspec::detail
