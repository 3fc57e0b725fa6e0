// What a package says about the tensors a Triton model serves: the inputs from the runner's records
// (the package's `*.wrapper.cpp`), the outputs from two probe runs on zeros whose batch sizes differ,
// and whether dim 0 is one dynamic batch size shared by every input and output (only then can
// Triton's batcher merge requests into one run and the outputs be split back).
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <externspec/torch/aoti_runner.h>

namespace externspec::triton {

struct TensorFacts {
  std::string name;                      // INPUT__i / OUTPUT__i (Triton's PyTorch convention)
  std::optional<c10::ScalarType> dtype;  // unset: the package does not record it
  std::optional<std::vector<std::int64_t>> dims;  // every dim, batch included; -1 dynamic; unset: rank unknown
};

struct PackageFacts {
  std::vector<TensorFacts> inputs, outputs;
  // Dim 0 of every input and output is the same dynamic size, used nowhere else.
  bool batch_dynamic = false;
  std::int64_t max_batch = std::numeric_limits<std::int64_t>::max();  // its recorded maximum
  // Why the outputs are not known (a probe that could not be built or failed), "" when they are.
  std::string outputs_unknown;
  // Why the batch is not dynamic, for the refusal of a config with max_batch_size > 0.
  std::string batch_static_reason;
};

std::string input_name(std::size_t index);
std::string output_name(std::size_t index);

PackageFacts package_facts(AOTIRunner& runner);

}  // namespace externspec::triton
