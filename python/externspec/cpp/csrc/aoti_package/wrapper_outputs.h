// What an AOTInductor wrapper source (`*.wrapper.cpp`) records about the outputs of its extern
// calls. After the call that fills them, torch 2.13 and later state each output buffer's size and
// stride as the code after the call assumes them (env-gated, AOTI_RUNTIME_CHECK_INPUTS):
//
//   aoti_torch_proxy_executor_call_function(proxy_executor, 0, 3, ..., 2,
//       std::array<AtenTensorHandle, 2>{buf6, buf8}.data());          // node 0, tensor slots
//   assert_size_stride(buf8, {s77, 8L}, {8L, 1L}, "torch.ops.ns.op.default");  // slot 1's shape
//
// torch 2.11 and 2.12 write no such line after an extern call: such a source records no output.
// The element type the compiled code reads and writes the buffer as comes from its fused-kernel
// calls, `(float*)(buf8.data_ptr())`, following `auto buf9 = std::move(buf8);  // reuse` (inductor
// reuses a buffer only for one of the same dtype); a buffer no kernel call casts (returned, or
// passed only to other extern calls) records no dtype.
// Read line by line in one pass; other lines are ignored. What is kept is bounded in total: one
// record per output of a call (a second `assert_size_stride` of the same buffer after the same call
// is a PackageError naming `label` and its line), at most 1,024 dimensions or tensors a line, and
// 2^20 recorded dimensions in all (past either: a PackageError naming the line).
#pragma once

#include <c10/core/ScalarType.h>

#include <cstddef>
#include <optional>
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
  std::string op;           // the op the code was compiled for (`aten::relu`, `ns::op.overload`), or ""
  std::optional<c10::ScalarType> dtype;  // the element type the code after the call uses, if stated
};

std::vector<RecordedOutput> recorded_outputs_from_wrapper(std::string_view source, const std::string& label);

}  // namespace externspec::detail
