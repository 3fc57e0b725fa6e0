// Which extern call failed: a proxy executor around the runner's own that remembers the node of a
// call that threw, so the error a request gets names the node and its op (`node 3 `buf4`
// (aten::index_select)`) also when the op's own exception (an ATen IndexError) does not.
#pragma once

#include <exception>
#include <optional>
#include <string>

#include <externspec/torch/aoti_runner.h>

namespace externspec::triton {

class NamingExecutor : public torch::aot_inductor::ProxyExecutor {
 public:
  explicit NamingExecutor(externspec::ProxyExecutor& inner) : inner_(inner) {}

  void call_function(int extern_node_index, int num_ints, int64_t* flatten_int_args, int num_tensors,
                     AtenTensorHandle* flatten_tensor_args) override;
#if TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 13
  std::unordered_map<std::string, c10::IValue> get_custom_objs() const override { return inner_.get_custom_objs(); }
#endif

  // The message of `error`, the run's failure, without torch's C++ backtrace, led by the failed node's
  // label when the message does not name it already.
  std::string describe(const std::exception& error) const;

 private:
  externspec::ProxyExecutor& inner_;
  std::optional<int> failed_;
};

// Runs `inputs` on `runner` through a NamingExecutor; throws std::runtime_error with describe()'s text.
std::vector<at::Tensor> run_naming_calls(AOTIRunner& runner, const std::vector<at::Tensor>& inputs);

}  // namespace externspec::triton
