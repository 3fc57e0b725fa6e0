#include "aoti_package/zip_reader.h"

#include <caffe2/serialize/crc_alt.h>
#include <caffe2/serialize/inline_container.h>
#include <c10/util/Exception.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <string_view>

#include <externspec/externspec.h>
#include <externspec/messages.h>
#include <externspec/torch/errors.h>

#include "aoti_package/file_kind.h"
#include "aoti_package/string_object.h"

namespace externspec::detail {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;
// Members torch's reader reads whole while it opens the package (a version number, an id): a few
// bytes in every package torch writes.
constexpr std::uint64_t kOpeningRecordLimit = 4096;
constexpr std::string_view kOpeningRecords[] = {"version", ".data/version", ".data/serialization_id"};

// Why a member name could point outside the package, or nullptr.
const char* escape_reason(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.front() == '/') return "is absolute";
  if (name.find('\\') != std::string_view::npos) return "contains a backslash";
  std::string_view rest = name;
  if (rest.back() == '/') rest.remove_suffix(1);  // a directory entry
  while (true) {
    auto slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    if (part.empty()) return "has an empty path component";
    if (part == "." || part == "..") return "has a `.` or `..` path component";
    if (slash == std::string_view::npos) return nullptr;
    rest.remove_prefix(slash + 1);
  }
}

// `size` bytes, over the limit of `limit` bytes: Python's read_member says the same (messages.def).
std::string member_too_large(std::uint64_t size, std::uint64_t limit) {
  return message(Message::MEMBER_TOO_LARGE, {{"size", std::to_string(size)}, {"limit", std::to_string(limit)}});
}

// `s` with ASCII letters in lower case, as miniz compares names (MZ_TOLOWER).
std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::uint64_t le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// One entry of the central directory.
struct Entry {
  std::string name;
  std::uint16_t flags = 0, method = 0;
  std::uint32_t crc = 0;
  std::uint64_t compressed = 0, size = 0;
};

// An archive's bytes as torch's reader and the checks here read them: a file, through the one
// descriptor both use (the bytes checked are the bytes read), or memory the caller keeps.
class FileSource final : public caffe2::serialize::ReadAdapterInterface {
 public:
  FileSource(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
  ~FileSource() override { ::close(fd_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  std::size_t size() const override { return static_cast<std::size_t>(size_); }
  std::size_t read(std::uint64_t pos, void* buf, std::size_t n, const char* /*what*/) const override {
    std::size_t got = 0;
    while (got < n) {
      ssize_t r = ::pread(fd_, static_cast<char*>(buf) + got, n - got, static_cast<off_t>(pos + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
    return got;
  }

 private:
  int fd_;
  std::uint64_t size_;
};

class MemorySource final : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  std::size_t size() const override { return bytes_.size(); }
  std::size_t read(std::uint64_t pos, void* buf, std::size_t n, const char* /*what*/) const override {
    if (pos >= bytes_.size()) return 0;
    n = std::min<std::size_t>(n, bytes_.size() - static_cast<std::size_t>(pos));
    std::memcpy(buf, bytes_.data() + pos, n);
    return n;
  }

 private:
  std::string_view bytes_;
};

// Whether `s` is well-formed UTF-8 (what a reader that decodes names, Python's zipfile, accepts
// for a name flagged UTF-8).
bool is_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    std::uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b >> 6) != 2) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

// `read(offset, n)`: `n` bytes at `offset` of the archive, or nullopt when it ends first.
using ReadAt = std::function<std::optional<std::string>(std::uint64_t, std::uint64_t)>;

ReadAt reader_of(const caffe2::serialize::ReadAdapterInterface& source) {
  return [&source](std::uint64_t offset, std::uint64_t n) -> std::optional<std::string> {
    if (offset > source.size() || n > source.size() - offset) return std::nullopt;
    std::string out(static_cast<std::size_t>(n), '\0');
    if (source.read(offset, out.data(), out.size(), "zip directory") != out.size()) return std::nullopt;
    return out;
  };
}

PackageError unreadable(const std::string& path, const std::string& why) {
  return PackageError(path + ": not a readable package: " + why);
}

// The sizes of the fixed parts: the end-of-central-directory record (a comment of up to 64 KiB
// follows it), the zip64 locator and record, and a directory entry's header.
constexpr std::uint64_t kEocd = 22, kLocator = 20, kEocd64 = 56, kHeader = 46;

// Where the end records put the directory: its entry count, size and offset, and where it must end.
struct Place {
  std::uint64_t count, size, offset, end;
};

// `place` (the classic record's) replaced by the zip64 record the `locator` before the end record
// (at `eocd_offset`) points at, once the two are checked to agree.
void take_zip64(const std::string& path, const std::string& locator, std::uint64_t eocd_offset, const ReadAt& read,
                Place& place) {
  const std::uint64_t offset64 = le(locator.data() + 8, 8);
  if (le(locator.data() + 4, 4) != 0 || le(locator.data() + 16, 4) != 1)
    throw unreadable(path, "the archive spans several disks");
  if (eocd_offset < kLocator + kEocd64 || offset64 != eocd_offset - kLocator - kEocd64)
    throw unreadable(path, "the zip64 end-of-central-directory locator does not point at the record right before it "
                           "(zip readers differ on which record they take)");
  const auto eocd64 = read(offset64, kEocd64);
  if (!eocd64 || eocd64->compare(0, 4, "PK\x06\x06", 4) != 0)
    throw unreadable(path, "no zip64 end-of-central-directory record where its locator points");
  const char* r = eocd64->data();
  if (le(r + 4, 8) != kEocd64 - 12)
    throw unreadable(path, "the zip64 end-of-central-directory record has extensible data (zip readers differ on "
                           "where it ends)");
  if (le(r + 16, 4) != 0 || le(r + 20, 4) != 0 || le(r + 24, 8) != le(r + 32, 8))
    throw unreadable(path, "the archive spans several disks");
  const Place zip64{le(r + 32, 8), le(r + 40, 8), le(r + 48, 8), offset64};
  if ((place.count != 0xFFFF && place.count != zip64.count) || (place.size != 0xFFFFFFFF && place.size != zip64.size) ||
      (place.offset != 0xFFFFFFFF && place.offset != zip64.offset))
    throw unreadable(path, "the zip64 and the classic end-of-central-directory records disagree on the directory "
                           "(zip readers differ on which they take)");
  place = zip64;
}

// The directory's place as the end records at the end of the file state it.
Place end_records(const std::string& path, std::uint64_t file_size, const ReadAt& read) {
  const std::uint64_t tail_size = std::min<std::uint64_t>(file_size, kEocd + 0xFFFF);
  const auto tail = read(file_size - tail_size, tail_size);
  if (!tail || tail_size < kEocd) throw not_a_package(path, "not_zip");
  const std::string_view eocd_sig("PK\x05\x06", 4);
  std::size_t at = tail->rfind(eocd_sig);
  if (at != std::string::npos && at > tail->size() - kEocd)
    throw unreadable(path, "a zip end-of-central-directory signature lies in the file's last " +
                               std::to_string(kEocd - 1) + " bytes (zip readers differ on which record they take)");
  if (at == std::string::npos) throw not_a_package(path, "not_zip");
  const char* eocd = tail->data() + at;
  const std::uint64_t eocd_offset = file_size - tail_size + at;
  if (at + kEocd + le(eocd + 20, 2) != tail->size())
    throw unreadable(path, "the end-of-central-directory record's comment does not reach the end of the file");
  if (le(eocd + 4, 2) != 0 || le(eocd + 6, 2) != 0 || le(eocd + 8, 2) != le(eocd + 10, 2))
    throw unreadable(path, "the archive spans several disks");
  Place place{le(eocd + 10, 2), le(eocd + 12, 4), le(eocd + 16, 4), eocd_offset};
  const auto locator = eocd_offset >= kLocator ? read(eocd_offset - kLocator, kLocator) : std::nullopt;
  if (locator && locator->compare(0, 4, "PK\x06\x07", 4) == 0) {
    // zip64: miniz and zipfile both take the zip64 record whenever the locator is there.
    take_zip64(path, *locator, eocd_offset, read, place);
  } else if (place.count == 0xFFFF || place.size == 0xFFFFFFFF || place.offset == 0xFFFFFFFF) {
    throw unreadable(path, "no zip64 end-of-central-directory locator");
  }
  return place;
}

// The entry's fields recorded saturated, read from its one zip64 extra field (they are there in
// this order), `zip64` set if it has one; the reason its extra data is refused, or nullptr.
const char* read_zip64_extra(std::string_view extra, Entry& e, std::uint64_t& header_offset, bool& zip64) {
  const std::uint64_t extra_len = extra.size();
  for (std::uint64_t x = 0; x < extra_len;) {
    if (extra_len - x < 4) return "has a damaged extra field";
    const std::uint64_t id = le(extra.data() + x, 2), len = le(extra.data() + x + 2, 2);
    if (len > extra_len - x - 4) return "has a damaged extra field";
    if (id == 1) {
      if (zip64) return "has two zip64 extra fields (zip readers differ on which they take)";
      zip64 = true;
      std::uint64_t f = x + 4;
      const std::pair<std::uint64_t*, std::uint64_t> fields[] = {
          {&e.size, 0xFFFFFFFF}, {&e.compressed, 0xFFFFFFFF}, {&header_offset, 0xFFFFFFFF}};
      for (const auto& [field, saturated] : fields) {
        if (*field != saturated) continue;
        if (f + 8 > x + 4 + len) return "has a short zip64 extra field";
        *field = le(extra.data() + f, 8);
        f += 8;
      }
    }
    x += 4 + len;
  }
  return nullptr;
}

// Entry `k` of the directory `dir`, whose header is at `pos`; `pos` moves past it.
Entry directory_entry(const std::string& path, std::uint64_t file_size, const std::string& dir, std::uint64_t k,
                      std::uint64_t& pos) {
  if (dir.size() - pos < kHeader || dir.compare(pos, 4, "PK\x01\x02", 4) != 0)
    throw unreadable(path, "central directory entry " + std::to_string(k) + " is damaged");
  const char* h = dir.data() + pos;
  const std::uint64_t name_len = le(h + 28, 2), extra_len = le(h + 30, 2), comment_len = le(h + 32, 2);
  if (dir.size() - pos - kHeader < name_len + extra_len + comment_len)
    throw unreadable(path, "central directory entry " + std::to_string(k) + " is cut short");
  Entry e;
  e.flags = static_cast<std::uint16_t>(le(h + 8, 2));
  e.method = static_cast<std::uint16_t>(le(h + 10, 2));
  e.crc = static_cast<std::uint32_t>(le(h + 16, 4));
  e.compressed = le(h + 20, 4);
  e.size = le(h + 24, 4);
  e.name.assign(h + kHeader, name_len);
  const auto entry = [&](const std::string& why) {
    return unreadable(path, "central directory entry " + std::to_string(k) + " (" + ticked(e.name) + ") " + why);
  };
  if (e.name.find('\0') != std::string::npos)
    throw entry("has a NUL byte in its name (zip readers differ on where the name ends)");
  if ((e.flags & 0x800) && !is_utf8(e.name)) throw entry("is flagged UTF-8 but its name is not UTF-8");
  if (static_cast<unsigned char>(h[6]) > 63) throw entry("needs a zip version newer than 6.3");
  std::uint64_t disk = le(h + 34, 2), header_offset = le(h + 42, 4);
  bool zip64 = false;
  if (const char* why = read_zip64_extra(std::string_view(h + kHeader + name_len, extra_len), e, header_offset, zip64))
    throw entry(why);
  if (e.size == 0xFFFFFFFF || e.compressed == 0xFFFFFFFF || header_offset == 0xFFFFFFFF) {
    if (!zip64) throw entry("records a saturated size or offset without a zip64 extra field");
  }
  if (disk != 0) throw entry("lies on another disk");
  if (header_offset > file_size || file_size - header_offset < 30 || e.compressed > file_size - header_offset - 30)
    throw entry("has data that lies past the end of the file");
  if (e.size != 0 && e.compressed == 0) throw entry("records data but no compressed bytes");
  pos += kHeader + name_len + extra_len + comment_len;
  return e;
}

// The central directory of the zip at `path` (of `file_size` bytes), zip64 included, read so that
// it is the one directory every reader sees: torch's (miniz, which PyTorchStreamReader opens and
// which looks names up ignoring ASCII case) and Python's zipfile. Where they could read two
// different directories, or one entry two ways, the archive is refused:
// * the end record is the last signature in the file and its comment reaches the end (miniz skips
//   a signature in the last 21 bytes, zipfile fails on it);
// * a zip64 locator before the end record is always followed (miniz and zipfile do, whatever the
//   classic record says), and its record must sit right before the locator with no extensible data
//   (zipfile reads it there, miniz where the locator points) and agree with every classic field
//   that is not saturated;
// * the directory ends where the end records begin (zipfile reads it back from there, miniz from
//   its recorded offset) and its entries fill it exactly (miniz reads the recorded count, zipfile
//   until the bytes run out);
// * each entry's extra fields tile its extra data, with at most one zip64 field (miniz takes the
//   first, zipfile every one, the last winning).
// Every offset and count is checked against the file before it is used, so nothing here allocates
// more than the file holds.
std::vector<Entry> central_directory(const std::string& path, std::uint64_t file_size, const ReadAt& read) {
  const Place place = end_records(path, file_size, read);
  if (place.offset > place.end || place.size != place.end - place.offset)
    throw unreadable(path, "the central directory does not end where the end-of-central-directory records begin "
                           "(zip readers differ on where they read it)");
  if (place.count > place.size / kHeader)
    throw unreadable(path, "the central directory's entry count does not fit its size");
  const auto dir = read(place.offset, place.size);
  if (!dir) throw unreadable(path, "the central directory is cut short");
  std::vector<Entry> entries;
  entries.reserve(static_cast<std::size_t>(place.count));
  std::uint64_t pos = 0;
  for (std::uint64_t k = 0; k < place.count; ++k) entries.push_back(directory_entry(path, file_size, *dir, k, pos));
  if (pos != place.size)
    throw unreadable(path, "the central directory holds more than its " + std::to_string(place.count) +
                               " entries (zip readers differ on how many they read)");
  return entries;
}

// The members of an archive, by name inside its top folder, once every name and size the directory
// records has passed the checks (named by `path` in messages).
std::map<std::string, MemberRecord> checked_members(const std::vector<Entry>& entries, const std::string& path) {
  std::map<std::string, MemberRecord> members;
  if (entries.empty()) throw PackageError(path + ": not a readable package: the archive is empty");
  const std::string top = entries.front().name.substr(0, entries.front().name.find('/') + 1);
  std::set<std::string> seen;  // names with ASCII letters folded: torch's reader looks names up ignoring case
  for (const Entry& e : entries) {
    // Named as torch's reader names members: inside the top folder.
    const bool in_top = top.size() >= 2 && e.name.compare(0, top.size(), top) == 0;
    std::string inner = in_top ? e.name.substr(top.size()) : e.name;
    const auto refuse = [&](const std::string& why) {
      return PackageError(path + ": member " + ticked(inner) + " " + why);
    };
    if (const char* why = escape_reason(inner))
      throw refuse(std::string(why) + ": it would name a file outside the package; nothing was loaded");
    if (!in_top) throw refuse("is not in the package's top folder " + ticked(top));
    if (!seen.insert(ascii_lower(e.name)).second)
      throw refuse("appears more than once, its letters' case aside (torch's zip reader looks names up ignoring "
                   "case, and zip readers differ in which copy they take); nothing was loaded");
    if (e.flags & 1) throw refuse("is encrypted");
    if (e.method != 0 && e.method != 8)
      throw refuse("is compressed with zip method " + std::to_string(e.method) + " (a package's are stored or deflated)");
    if (e.method == 0 && e.compressed != e.size)
      throw refuse("is stored with two different sizes (" + std::to_string(e.compressed) + " and " +
                   std::to_string(e.size) + " bytes)");
    const std::string folded = ascii_lower(inner);
    if (std::find(std::begin(kOpeningRecords), std::end(kOpeningRecords), folded) != std::end(kOpeningRecords) &&
        e.size > kOpeningRecordLimit)
      throw refuse("records " + member_too_large(e.size, kOpeningRecordLimit) +
                   " for a member torch's zip reader reads as it opens");
    members.emplace(std::move(inner), MemberRecord{e.size, e.crc});
  }
  return members;
}

// A file opened once: stat first (opening a FIFO would block), then the descriptor's own size.
std::shared_ptr<caffe2::serialize::ReadAdapterInterface> open_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw PackageError("cannot open package " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw PackageError("package " + path + " is not a regular file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw PackageError("cannot open package " + path + ": " + std::strerror(errno));
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw PackageError("package " + path + " is not a regular file");
  }
  return std::make_shared<FileSource>(fd, static_cast<std::uint64_t>(st.st_size));
}

}  // namespace

ZipArchive::ZipArchive(const std::string& path) : ZipArchive(open_file(path), path) {}

ZipArchive::ZipArchive(std::string_view bytes, const std::string& label)
    : ZipArchive(std::make_shared<MemorySource>(bytes), label) {}

ZipArchive::ZipArchive(std::shared_ptr<caffe2::serialize::ReadAdapterInterface> source, const std::string& label)
    : path_(label), file_size_(source->size()), source_(std::move(source)) {
  // Everything the directory says is checked before torch's reader opens the archive.
  const std::vector<Entry> entries = central_directory(path_, file_size_, reader_of(*source_));
  for (const Entry& e : entries) names_.push_back(e.name);
  members_ = checked_members(entries, path_);
}

ZipArchive::~ZipArchive() = default;

void ZipArchive::open() {
  if (reader_) return;
  try {
    reader_ = std::make_unique<caffe2::serialize::PyTorchStreamReader>(source_);
  } catch (const c10::Error& e) {
    throw PackageError(path_ + ": not a readable package: " + e.what_without_backtrace());
  }
}

caffe2::serialize::PyTorchStreamReader& ZipArchive::reader() {
  open();
  return *reader_;
}

std::map<std::string, MemberRecord> archive_members(std::string_view bytes, const std::string& label) {
  return ZipArchive(bytes, label).members();
}

const MemberRecord& ZipArchive::record(const std::string& member) const {
  auto it = members_.find(member);
  if (it == members_.end()) throw PackageError(label(member) + ": no such member");
  return it->second;
}

void ZipArchive::verify(const std::string& member, std::uint64_t got_size, std::uint32_t got_crc) const {
  const MemberRecord& r = record(member);
  if (got_size != r.size)
    throw PackageError(label(member) + ": " + std::to_string(got_size) + " bytes read, the package records " +
                       std::to_string(r.size));
  if (got_crc != r.crc)
    throw PackageError(label(member) + ": its bytes do not match the CRC-32 the package records (a damaged or " +
                       "edited member)");
}

std::string ZipArchive::read(const std::string& member, std::uint64_t limit) {
  std::uint64_t n = size(member);
  if (n > limit)
    throw PackageError(label(member) + ": " + member_too_large(n, limit));
  std::string out(static_cast<std::size_t>(n), '\0');
  std::size_t got = 0;
  try {
    if (n > 0) got = reader().getRecord(member, out.data(), out.size());
  } catch (const c10::Error& e) {
    throw PackageError(label(member) + ": " + e.what_without_backtrace());
  }
  verify(member, got, crc32_fast(out.data(), got));
  return out;
}

void ZipArchive::extract(const std::string& member, const std::string& file) {
  std::uint64_t n = size(member);
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw PackageError("cannot create " + file + ": " + std::strerror(errno));
  std::string failure;
  std::uint64_t written = 0;
  std::uint32_t crc = 0;
  try {
    auto chunks = reader().createChunkReaderIter(member, static_cast<std::size_t>(n), kChunk);
    std::vector<char> buf(kChunk);
    while (written < n && failure.empty()) {
      std::size_t got = chunks.next(buf.data());
      if (got == 0) break;
      crc = crc32_fast(buf.data(), got, crc);
      for (std::size_t off = 0; off < got && failure.empty();) {
        ssize_t w = ::write(fd, buf.data() + off, got - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) failure = std::string("cannot write ") + file + ": " + std::strerror(errno);
        else off += static_cast<std::size_t>(w);
      }
      written += got;
    }
  } catch (const c10::Error& e) {
    failure = e.what_without_backtrace();
  }
  if (::close(fd) != 0 && failure.empty()) failure = std::string("cannot write ") + file + ": " + std::strerror(errno);
  if (!failure.empty()) throw PackageError(label(member) + ": " + failure);
  verify(member, written, crc);
}

MemberRecord file_record(const std::string& file, const std::string& failure) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw PackageError(failure + ": " + std::strerror(errno));
  MemberRecord record;
  std::vector<char> buf(std::size_t{1} << 16);
  while (true) {
    ssize_t r = ::read(fd, buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int err = errno;
      ::close(fd);
      throw PackageError(failure + ": " + std::strerror(err));
    }
    if (r == 0) break;
    record.crc = crc32_fast(buf.data(), static_cast<std::size_t>(r), record.crc);
    record.size += static_cast<std::uint64_t>(r);
  }
  ::close(fd);
  return record;
}

}  // namespace externspec::detail
