#include "package.h"

#include <caffe2/serialize/inline_container.h>
#include <c10/util/Exception.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <externspec/torch/errors.h>

namespace externspec::detail {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;

// Why a member name could point outside the package, or nullptr. The reader has already required
// every name to start with the top folder; this checks what follows it.
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

std::string quoted(const std::string& s) { return "`" + s + "`"; }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/externspec-aoti-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    throw PackageError("cannot create a temporary directory from " + pattern + ": " + std::strerror(errno));
  path_ = pattern;  // mkdtemp creates it with mode 0700
}

void TempDir::remove() noexcept {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
  path_.clear();
}

Package::Package(const std::string& path) : path_(path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw PackageError("cannot open package " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw PackageError("package " + path + " is not a regular file");
  file_size_ = static_cast<std::uint64_t>(st.st_size);
  try {
    reader_ = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
    members_ = reader_->getAllRecords();
  } catch (const c10::Error& e) {
    // e.g. "file in archive is not in a subdirectory m/: /abs/model.wrapper.so"
    throw PackageError(path + ": not a readable package: " + e.what_without_backtrace());
  }
  for (const auto& name : members_)
    if (const char* why = escape_reason(name))
      throw PackageError(path + ": member " + quoted(name) + " " + why +
                         ": it would name a file outside the package; nothing was loaded");
}

Package::~Package() = default;

ModelMembers Package::model(const std::string& model_name) const {
  if (escape_reason(model_name) || model_name.find('/') != std::string::npos)
    throw PackageError("model name " + quoted(model_name) + " is not a plain folder name");
  const std::string dir = "data/aotinductor/" + model_name + "/";
  const std::string so = ".wrapper.so";
  std::vector<std::string> found;
  std::vector<std::string> models;
  for (const auto& name : members_) {
    std::string_view n = name;
    if (n.substr(0, dir.size()) == dir && n.find('/', dir.size()) == std::string_view::npos && ends_with(n, so))
      found.push_back(name);
    const std::string root = "data/aotinductor/";
    if (n.substr(0, root.size()) == root && ends_with(n, so)) {
      auto end = n.find('/', root.size());
      if (end != std::string_view::npos) models.emplace_back(n.substr(root.size(), end - root.size()));
    }
  }
  if (found.size() != 1) {
    std::string have;
    for (const auto& m : models) have += (have.empty() ? "" : ", ") + quoted(m);
    throw PackageError(path_ + ": expected one " + dir + "*" + so + ", found " + std::to_string(found.size()) +
                       " (models in the package: " + (have.empty() ? std::string("none") : have) + ")");
  }
  ModelMembers out;
  out.library = found.front();
  const std::string stem = out.library.substr(0, out.library.size() - so.size());
  auto member = [&](const std::string& suffix) -> std::optional<std::string> {
    for (const auto& name : members_)
      if (name == stem + suffix) return name;
    return std::nullopt;
  };
  out.spec = member(".wrapper.json");
  out.source = member(".wrapper.cpp");
  out.metadata = member(".wrapper_metadata.json");
  out.weights = member(".wrapper_weights.blob");
  return out;
}

bool Package::has(const std::string& member) const {
  for (const auto& name : members_)
    if (name == member) return true;
  return false;
}

std::uint64_t Package::size(const std::string& member) {
  try {
    return reader_->getRecordSize(member);
  } catch (const c10::Error& e) {
    throw PackageError(label(member) + ": " + e.what_without_backtrace());
  }
}

std::string Package::read(const std::string& member, std::uint64_t limit) {
  std::uint64_t n = size(member);
  if (n > limit)
    throw PackageError(label(member) + ": " + std::to_string(n) + " bytes, over the limit of " +
                       std::to_string(limit) + " bytes");
  std::string out(static_cast<std::size_t>(n), '\0');
  try {
    if (n > 0 && reader_->getRecord(member, out.data(), out.size()) != out.size())
      throw PackageError(label(member) + ": shorter than its recorded size");
  } catch (const c10::Error& e) {
    throw PackageError(label(member) + ": " + e.what_without_backtrace());
  }
  return out;
}

void Package::extract(const std::string& member, const std::string& file) {
  std::uint64_t n = size(member);
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw PackageError("cannot create " + file + ": " + std::strerror(errno));
  std::string failure;
  try {
    auto chunks = reader_->createChunkReaderIter(member, static_cast<std::size_t>(n), kChunk);
    std::vector<char> buf(kChunk);
    std::uint64_t written = 0;
    while (written < n && failure.empty()) {
      std::size_t got = chunks.next(buf.data());
      if (got == 0) failure = "shorter than its recorded size";
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
}

}  // namespace externspec::detail
