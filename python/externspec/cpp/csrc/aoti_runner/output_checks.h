// The extern calls' output checks: what the wrapper source records about each output buffer an
// extern call fills (aoti_package/wrapper_outputs.h), compiled at load over the input checks'
// size symbols, and checked after every extern call of a run, whichever executor made it (the
// package's own, a Python executor's call_function through run_with, a benchmark's). An output the
// compiled code would misuse is a CallError naming the node and its op, the output and both values,
// before a fused kernel reads or writes the buffer: another rank, size or stride than recorded;
// another dtype than the kernels cast it to; another device than the runner's, or not strided;
// storage smaller than its sizes and strides need; storage shared with one of the call's input
// tensors where the op the code was compiled for returns a new tensor (its schema declares no
// alias). A source with no record (torch 2.11, 2.12) checks nothing.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <externspec/torch/proxy_executor.h>

#include "aoti_package/wrapper_outputs.h"
#include "aoti_runner/input_checks.h"

namespace externspec::detail {

class OutputChecks {
 public:
  // `plans`: the package's executor (the ops and input slots of its nodes). `symbols`/`names`: the
  // input checks' numbering of size symbols, extended with new ones (which no input binds, so the
  // sizes that use them are not checked). `device`: the runner's device.
  OutputChecks(const std::vector<RecordedOutput>& records, const externspec::ProxyExecutor& plans,
               c10::Device device, std::unordered_map<std::string, std::size_t>& symbols,
               std::vector<std::string>& names);
  bool empty() const { return empty_; }
  // CallError (its node set) for an output of node `node` in `tensors` that the compiled code would
  // misuse (the top of this file); the output is then replaced by a new tensor of the recorded
  // shape and dtype, so that a model which runs on after a failed call (torch 2.11 and 2.12 ignore
  // the status) writes inside an allocation of its own. `plans` name the node in the message.
  void check(std::size_t node, const externspec::ProxyExecutor& plans, int num_tensors, AtenTensorHandle* tensors,
             const SymbolValues& values) const;

 private:
  struct Output {
    std::size_t slot;
    std::string buffer;
    std::optional<c10::ScalarType> dtype;  // unset: no kernel states it
    bool fresh;  // the op the code was compiled for returns new tensors: no storage shared with inputs
    std::vector<Expr> sizes, strides;
  };
  struct Node {
    std::size_t num_inputs = 0;  // the call's input tensor slots come first
    std::vector<Output> outputs;
  };
  std::string difference(const Output& o, const Node& n, const at::Tensor& t, int num_tensors,
                         AtenTensorHandle* tensors, const SymbolValues& values) const;

  c10::Device device_;
  std::vector<Node> by_node_;  // by extern node index
  bool empty_ = true;
};

// A proxy executor that makes each call through `inner`, then checks the call's outputs.
class CheckedExecutor : public torch::aot_inductor::ProxyExecutor {
 public:
  CheckedExecutor(torch::aot_inductor::ProxyExecutor* inner, const OutputChecks& checks,
                  const externspec::ProxyExecutor& plans, const SymbolValues& values)
      : inner_(inner), checks_(checks), plans_(plans), values_(values) {}
  void call_function(int extern_node_index, int num_ints, int64_t* flatten_int_args, int num_tensors,
                     AtenTensorHandle* flatten_tensor_args) override;
#if TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 13
  std::unordered_map<std::string, c10::IValue> get_custom_objs() const override { return inner_->get_custom_objs(); }
#endif
  // The output check that failed, if it was the run's first failure (else null: the executor's own
  // error comes first).
  std::exception_ptr first_error() const { return error_; }

 private:
  torch::aot_inductor::ProxyExecutor* inner_;
  const OutputChecks& checks_;
  const externspec::ProxyExecutor& plans_;  // the package's plans, naming nodes in messages
  const SymbolValues& values_;
  bool failed_ = false;
  std::exception_ptr error_;
};

}  // namespace externspec::detail
