// libFuzzer target: a model library's ELF tables as the runner reads them before it opens the library
// (cpp/csrc/aoti_runner/elf_symbols.cpp; Python's twin is externspec/elf_symbols.py). Any bytes give
// the names or a PackageError, never another exception, a sanitizer report (a read past the file, a
// table past its bounds) or an allocation over libFuzzer's limit (the tables are capped first).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include <externspec/torch/errors.h>

#include "aoti_runner/elf_symbols.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The reader takes a file, as the runner gives it the extracted library: a memory file, rewritten.
  static const int fd = memfd_create("fuzz_elf_symbols", 0);
  if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) __builtin_trap();
  try {
    externspec::detail::dynamic_symbols("/proc/self/fd/" + std::to_string(fd), "fuzz.so");
  } catch (const externspec::PackageError&) {
  }
  return 0;
}
