#include "extern_calls.h"

#include <stdexcept>

#include "triton_errors.h"

namespace externspec::triton {

void NamingExecutor::call_function(int extern_node_index, int num_ints, int64_t* flatten_int_args, int num_tensors,
                                   AtenTensorHandle* flatten_tensor_args) {
  try {
    inner_.call_function(extern_node_index, num_ints, flatten_int_args, num_tensors, flatten_tensor_args);
  } catch (...) {
    if (!failed_) failed_ = extern_node_index;  // the first failure is the one the runner raises
    throw;
  }
}

std::string NamingExecutor::describe(const std::exception& error) const {
  std::string message = without_backtrace(error);
  if (!failed_ || *failed_ < 0 || static_cast<std::size_t>(*failed_) >= inner_.size()) return message;
  const std::string& label = inner_.plan(static_cast<std::size_t>(*failed_)).label;
  return message.find(label) == std::string::npos ? label + ": " + message : message;
}

std::vector<at::Tensor> run_naming_calls(AOTIRunner& runner, const std::vector<at::Tensor>& inputs) {
  // The runner's own executor, as AOTIRunner::run passes it (non-const); the run only reads its plans.
  NamingExecutor naming(const_cast<externspec::ProxyExecutor&>(runner.executor()));
  try {
    return runner.run_with(inputs, &naming);
  } catch (const std::exception& e) {
    throw std::runtime_error(naming.describe(e));
  }
}

}  // namespace externspec::triton
