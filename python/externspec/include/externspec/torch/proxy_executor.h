// externspec's C++ proxy executor: runs extern-kernel nodes from AOTInductor's two flat arrays
// through the c10 dispatcher's boxed API. The C++ twin of the Python executor, a file per question
// (cpp/csrc/executor/ ops.cpp, op_policy.cpp, layout.cpp, plan.cpp, proxy_executor.cpp beside
// python/externspec/abi/ ops.py, op_policy.py, layout.py, plan.py, proxy_executor.py): same load-time rules, same
// call-time checks, same error kinds.
//
// Load (once): decode the spec with the generated header (version policy included), resolve every
// target to an OperatorHandle (registry lookup only: nothing is loaded from the spec), validate
// each node against the runtime FunctionSchema by argument name, and precompute a plan: the
// boxed stack with every static value decoded, and for each dynamic argument its stack position
// and fixed array offsets.
// Call: check both array lengths against the plan before reading any element, build the stack
// from the plan's static values and the arrays (in a vector the thread reuses),
// callBoxed, write output tensors, check int returns and list lengths.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/function.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/inductor/aoti_torch/proxy_executor.h>
#include <torch/headeronly/version.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <externspec/externspec.h>
#include <externspec/torch/errors.h>
#include <externspec/torch/limits.h>

namespace externspec {

// Torchbind objects the spec may name (`as_custom_obj.name` -> object).
using CustomObjects = std::unordered_map<std::string, c10::IValue>;

// One call of a generated wrapper as its `aoti_torch_proxy_executor_call_function` line states it.
struct CallLengths {
  std::int64_t index, num_ints, num_tensors;
};

class LayoutChoice;  // cpp/csrc/executor/call_layout.h

// What one dynamic argument reads from the arrays (executor_kinds.def, which the Python executor reads too).
enum class FillKind : std::uint8_t {
#define ES_FILL_KIND(name, executors, what) name,
#include <externspec/torch/executor_kinds.def>
};

struct Fill {
  std::uint32_t stack_index;
  FillKind kind;
  std::uint32_t start;
  std::uint32_t count;           // slots read
  std::vector<bool> pattern;     // OptTensors: true where an item takes a slot
  std::string arg_name;          // for error messages
};

// What one return writes into the arrays (executor_kinds.def).
enum class OutKind : std::uint8_t {
#define ES_OUT_KIND(name, what) name,
#include <externspec/torch/executor_kinds.def>
};

// A precondition the op policy states on an int / int[] argument (op_policy.def, ES_CHECK),
// checked on the call's stack before the kernel runs.
struct ArgCheck {
  std::uint32_t arg;      // the argument's stack index
  std::uint32_t tensor;   // the stack index of the tensor whose rank `dims` and `rank` mean
  std::size_t entry;      // the ES_CHECK entry (op_policy.cpp)
};

struct Output {
  OutKind kind;
  std::uint32_t slot;   // tensor slot (Tensor, Tensors, OptTensor) or int slot (Int)
  std::uint32_t extra;  // Tensors: list length; OptTensor: 0 (None) or 1
};

struct NodePlan {
  explicit NodePlan(c10::OperatorHandle handle) : op(std::move(handle)) {}
  explicit NodePlan(torch::jit::Function* torchbind_method) : method(torchbind_method) {}
  // What the node calls: a dispatcher op, or (`call_torchbind`) a torchbind class's method, whose
  // first argument is the object.
  std::optional<c10::OperatorHandle> op;
  torch::jit::Function* method = nullptr;
  const c10::FunctionSchema& schema() const { return op ? op->schema() : method->getSchema(); }
  void call(std::vector<c10::IValue>& stack) const {
    if (op) op->callBoxed(stack);
    else method->run(stack);
  }
  std::string label;
  std::vector<c10::IValue> stack;  // one entry per schema argument; dynamic ones are placeholders
  std::vector<Fill> fills;
  std::vector<Output> outputs;
  std::vector<ArgCheck> checks;  // the op policy's checks of the call's ints (most ops have none)
  std::size_t num_returns = 0;
  // The call's array lengths.
  std::int64_t num_ints = 0, num_tensors = 0, num_input_ints = 0, num_input_tensors = 0;
  // A node whose two call layouts differ while the spec's layout is undecided ("auto", no decisive
  // call yet): its lengths are its NODE_ARGUMENTS candidate's, and plan_for_call picks the candidate
  // each call's lengths match.
  bool layout_undecided = false;
  // The int slots of omitted kwarg-only defaults laid out as passed (OMITTED_DEFAULTS_PASSED): where
  // this is 0 the node's two call layouts are one.
  std::int64_t passed_default_ints = 0;
};

class ProxyExecutor : public torch::aot_inductor::ProxyExecutor {
 public:
  // `json` is the text of an ExternKernelNodes document. Only dispatcher ops are callable, and not
  // those the op policy (op_policy.def) denies unless `allow_ops` names them (`ns::name`,
  // `ns::name.overload` or `ns::*`; std::invalid_argument for another form). `device` is the
  // runtime device: every `as_device` argument passes it in place of the serialized device (as
  // torch's proxy executor does with its runner's device); unset, the serialized device is passed.
  // `call_layout` says where a torch-written file's omitted kwarg-only defaults are (unset: "auto",
  // decided from the calls); a versioned file is NODE_ARGUMENTS (the other is a SpecMismatchError).
  // `call_lengths`, each call of the package's wrapper (`wrapper_call_lengths`), decides "auto" at
  // load and is checked against the plans (a call matching no layout of its node: SpecMismatchError).
  // `limits.max_json_bytes` bounds `json` (a DecodeError beyond it, before parsing).
  explicit ProxyExecutor(std::string_view json, CustomObjects custom_objects = {},
                         std::vector<std::string> allow_ops = {}, std::optional<c10::Device> device = std::nullopt,
                         std::optional<CallLayout> call_layout = std::nullopt,
                         const std::optional<std::vector<CallLengths>>& call_lengths = std::nullopt,
                         const Limits& limits = {});
  ~ProxyExecutor() override;
  ProxyExecutor(const ProxyExecutor&) = delete;
  ProxyExecutor& operator=(const ProxyExecutor&) = delete;

  // The AOTInductor entry point. Throws (CallError for arrays that do not match the plan); the
  // exception is also kept per thread (take_last_error) because AOTInductor's C boundary turns it
  // into a bare failure code.
  void call_function(int extern_node_index, int num_ints, int64_t* flatten_int_args, int num_tensors,
                     AtenTensorHandle* flatten_tensor_args) override;

#if TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 13
  std::unordered_map<std::string, c10::IValue> get_custom_objs() const override { return custom_objects_; }
#else  // torch 2.11's ProxyExecutor has no get_custom_objs (2.13's has; 2.12 was not checked)
  std::unordered_map<std::string, c10::IValue> get_custom_objs() const { return custom_objects_; }
#endif

  std::size_t size() const { return plans_.size(); }
  const std::optional<c10::Device>& device() const { return device_; }
  const NodePlan& plan(std::size_t index) const { return plans_.at(index); }
  // The layout of this spec's calls: the option, a versioned file's, or what "auto" decided (unset:
  // undecided, or no node whose two layouts differ has been called yet).
  std::optional<CallLayout> call_layout() const;

  // The plan a call of node `index` with these array lengths runs by: CallError for an index out of
  // range or lengths that match no layout of the node (the first call that matches one of a node's
  // two candidates decides the spec's layout, under "auto").
  const NodePlan& plan_for_call(int index, std::int64_t num_ints, std::int64_t num_tensors) const;

  // CallError unless the array lengths are the plan's.
  static void check_lengths(const NodePlan& plan, std::int64_t num_ints, std::int64_t num_tensors);

  // The exception the last failed call_function on this thread threw (then cleared), or null.
  static std::exception_ptr take_last_error();

 private:
  void run(int index, int num_ints, const int64_t* ints, int num_tensors, AtenTensorHandle* tensors) const;

  CustomObjects custom_objects_;
  std::optional<c10::Device> device_;
  std::vector<NodePlan> plans_;
  std::unique_ptr<LayoutChoice> choice_;
};

}  // namespace externspec
