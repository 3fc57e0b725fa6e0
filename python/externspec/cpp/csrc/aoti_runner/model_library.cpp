#include "aoti_runner/model_library.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include <externspec/torch/errors.h>

namespace externspec::detail {
namespace {

struct Loaded {
  MemberRecord record;
  int fd;  // the library's file, kept open to compare bytes (it stays mapped anyway)
  void* handle;
};

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

// Never destroyed: the libraries outlive every runner, and static destruction order is unknown.
std::vector<Loaded>& registry() {
  static auto* loaded = new std::vector<Loaded>();
  return *loaded;
}

bool same_bytes(int a, int b, std::uint64_t size) {
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  std::vector<char> x(kChunk), y(kChunk);
  for (std::uint64_t off = 0; off < size;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, size - off));
    for (auto [fd, buf] : {std::pair{a, x.data()}, std::pair{b, y.data()}})
      for (std::size_t got = 0; got < n;) {
        ssize_t r = ::pread(fd, buf + got, n - got, static_cast<off_t>(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        got += static_cast<std::size_t>(r);
      }
    if (std::memcmp(x.data(), y.data(), n) != 0) return false;
    off += n;
  }
  return true;
}

}  // namespace

void* load_library(const std::string& file, const MemberRecord& record, const std::string& failure,
                   const std::function<void()>& before_open) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw PackageError(failure + ": " + std::strerror(errno));
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const Loaded& l : registry())
    if (l.record.size == record.size && l.record.crc == record.crc && same_bytes(l.fd, fd, record.size)) {
      ::close(fd);
      return l.handle;
    }
  if (before_open) {
    try {
      before_open();
    } catch (...) {
      ::close(fd);
      throw;
    }
  }
  dlerror();
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    ::close(fd);
    const char* err = dlerror();
    throw PackageError(failure + ": " + (err ? err : "dlopen failed"));
  }
  registry().push_back(Loaded{record, fd, handle});
  return handle;
}

}  // namespace externspec::detail
