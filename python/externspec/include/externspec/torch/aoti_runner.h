// Runs an AOTInductor-compiled model library (*.wrapper.so) with externspec's executor as its
// proxy executor, through the C entry points of torch/csrc/inductor/aoti_runtime/interface.h.
//
// Facts this relies on (docs/aoti-packages.md): the library has no
// RPATH (torch must be loaded first), it is dlopen'ed RTLD_NOW | RTLD_LOCAL (RTLD_GLOBAL made a
// second model run the first one's code), the model takes ownership of input handles, output
// handles are released to the caller, and an exception thrown in call_function comes back only
// as a failure code, so the executor's own error is rethrown here.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <externspec/torch/proxy_executor.h>

namespace externspec {

// The expected shape of one model input: fixed sizes, or nullopt for a dynamic dimension.
using InputShape = std::vector<std::optional<std::int64_t>>;

class AOTIRunner {
 public:
  // `library`: the model's .so; `spec_json`: its extern-kernel file; `input_shapes`: what the model
  // was compiled for, checked on every run (empty: only the input count is checked; nullopt for
  // one input: that input's shape is not checked).
  AOTIRunner(const std::string& library, std::string_view spec_json, CustomObjects custom_objects = {},
             std::vector<std::optional<InputShape>> input_shapes = {});
  ~AOTIRunner();
  AOTIRunner(const AOTIRunner&) = delete;
  AOTIRunner& operator=(const AOTIRunner&) = delete;

  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs);
  // Run with another proxy executor (benchmarks compare executors on the same compiled model).
  std::vector<at::Tensor> run_with(const std::vector<at::Tensor>& inputs, torch::aot_inductor::ProxyExecutor* executor);

  std::size_t num_inputs() const { return num_inputs_; }
  std::size_t num_outputs() const { return num_outputs_; }
  const ProxyExecutor& executor() const { return *executor_; }
  // The pytree specs (torch.utils._pytree.treespec_dumps) of the model's inputs and outputs.
  const std::string& in_spec() const { return in_spec_; }
  const std::string& out_spec() const { return out_spec_; }

 private:
  struct Api;
  void check_inputs(const std::vector<at::Tensor>& inputs) const;

  std::string library_;
  void* dl_ = nullptr;
  std::unique_ptr<Api> api_;
  void* container_ = nullptr;
  std::unique_ptr<ProxyExecutor> executor_;
  std::vector<std::optional<InputShape>> input_shapes_;
  std::size_t num_inputs_ = 0, num_outputs_ = 0;
  std::string in_spec_, out_spec_;
};

}  // namespace externspec
