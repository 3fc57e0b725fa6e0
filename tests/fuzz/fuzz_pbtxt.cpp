// libFuzzer target: the Triton backend's scan of config.pbtxt for a stated max_batch_size
// (python/externspec/triton/backend/pbtxt.cpp), which replaced a recursive std::regex that a long run
// of spaces drove past the thread's stack. Any text: no sanitizer report, no input over libFuzzer's
// time limit, and the answer a stated field at the top level gives.
#include <cstddef>
#include <cstdint>
#include <string>

#include "pbtxt.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const bool stated = externspec::triton::states_max_batch_size(text);
  // A field stated first, before any text, is found whatever follows it.
  if (!externspec::triton::states_max_batch_size("max_batch_size: 4\n" + text)) __builtin_trap();
  // A field inside a message is not at the top level; a comment states nothing.
  if (externspec::triton::states_max_batch_size("# max_batch_size: 4\n" + text) != stated) __builtin_trap();
  return 0;
}
