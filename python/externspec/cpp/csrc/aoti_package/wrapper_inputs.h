// What an AOTInductor wrapper source (`*.wrapper.cpp`, shipped in the package) records about the
// model's inputs. The package keeps no other record of input dtypes and shapes: the generated
// code states them in its own (env-gated, AOTI_RUNTIME_CHECK_INPUTS) checks:
//
//   ConstantHandle arg2_1 = ConstantHandle(input_handles[0]);      // input 0 is `arg2_1`
//   << "expected: " << arg2_1_expected_dtype << "(at::kFloat), "     // dtype
//   if (arg2_1_size[0] < 2) {          if (arg2_1_size[0] > 64) {    // range of a dynamic size
//   int32_t arg2_1_expected_device_type = 0;                         // c10::DeviceType
//   auto arg2_1 = std::move(inputs[0]);
//   assert_size_stride(arg2_1, {s77, 4L}, {4L, 1L}, "input");        // rank, sizes, strides
//
// Read line by line in one pass (linear time on any text); lines that do not match are ignored.
// What is kept costs at most the source's own bytes: a line recording more than 1,024 dimensions
// for an input is a PackageError naming `label` (the member) and the line. `names` are the
// library's own input names (AOTInductorModelContainerGetInputName: `arg0_1`, ...), or empty:
// what a source records under another name for input N is not this library's and is not kept
// (the input is then unrecorded).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <externspec/torch/aoti_runner.h>

namespace externspec::detail {

std::vector<RecordedInput> recorded_inputs_from_wrapper(std::string_view source, std::size_t num_inputs,
                                                        const std::string& label,
                                                        const std::vector<std::string>& names);

}  // namespace externspec::detail
