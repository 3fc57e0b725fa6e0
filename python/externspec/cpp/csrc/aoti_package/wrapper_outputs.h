// What an AOTInductor wrapper source (`*.wrapper.cpp`) records about the outputs of its extern
// calls. After the call that fills them, torch 2.13 and later state each output buffer's size and
// stride as the code after the call assumes them (env-gated, AOTI_RUNTIME_CHECK_INPUTS):
//
//   aoti_torch_proxy_executor_call_function(proxy_executor, 0, 3, ..., 2,
//       std::array<AtenTensorHandle, 2>{buf6, buf8}.data());          // node 0, tensor slots
//   assert_size_stride(buf8, {s77, 8L}, {8L, 1L}, "torch.ops.ns.op.default");  // slot 1's shape
//
// torch 2.11 and 2.12 write no such line after an extern call: such a source records no output.
// Read line by line in one pass; other lines are ignored. What is kept costs at most the source's
// own bytes: a line naming more than 1,024 dimensions is a PackageError naming `label` and the line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace externspec::detail {

// One output buffer of one extern call, as the compiled code after the call expects it.
struct RecordedOutput {
  std::size_t node = 0;     // the call's extern node index
  std::size_t slot = 0;     // the buffer's position in the call's tensor array
  std::string buffer;       // the wrapper's name for it (`buf8`), for messages
  std::vector<std::string> sizes, strides;  // integer literals or expressions over size symbols
};

std::vector<RecordedOutput> recorded_outputs_from_wrapper(std::string_view source, const std::string& label);

}  // namespace externspec::detail
