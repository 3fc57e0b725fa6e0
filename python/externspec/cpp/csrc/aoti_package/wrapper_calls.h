// The lengths each extern call of an AOTInductor wrapper source (`*.wrapper.cpp`) states:
//
//   aoti_torch_proxy_executor_call_function(proxy_executor, 1, 2, std::array<int64_t, 2>{1, 1}.data(),
//       4, std::array<AtenTensorHandle, 4>{fc1_bias, arg4_1, buf0, buf1}.data())
//
// is node 1 with 2 ints and 4 tensors. They are literals under dynamic shapes too (the int array's
// elements may be expressions), and they are the package's evidence of its call layout
// (docs/torch-compat.md, "The call layout"). The C++ twin of python/externspec/aoti.py's
// `wrapper_call_lengths`, by the same grammar: a statement from the call's name to the next `;` that
// does not have this form is skipped; each character is read once (linear time on any text).
#pragma once

#include <string_view>
#include <vector>

#include <externspec/torch/proxy_executor.h>

namespace externspec::detail {

std::vector<CallLengths> wrapper_call_lengths(std::string_view source);

}  // namespace externspec::detail
