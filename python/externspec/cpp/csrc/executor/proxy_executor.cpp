// The proxy executor's load and call (include/externspec/torch/proxy_executor.h): the spec decoded,
// each node planned (layout.cpp), and each call's stack built from the plan and the flat arrays.
#include <externspec/torch/proxy_executor.h>

#include <ATen/core/Tensor.h>
#include <ATen/ops/scalar_tensor.h>
#include <c10/util/Exception.h>

#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include <externspec/torch/errors.h>
#include <externspec/messages.h>

#include "executor/call_layout.h"
#include "executor/plan.h"
#include "executor/op_policy.h"

namespace externspec {
namespace {

thread_local std::exception_ptr last_error;

// ---- call time ----

// The messages are built out of line: the checks stay small enough to inline into the call path.
[[noreturn]] __attribute__((noinline, cold)) void bad_input_tensor(const NodePlan& plan, const Fill& f,
                                                                   const at::Tensor* t, std::uint32_t k) {
  throw CallError(plan.label + ": tensor slot " + std::to_string(k) + " (argument `" + std::string(f.arg_name) +
                  "`) is " + (t == nullptr ? "a null handle" : "an undefined tensor"));
}

[[noreturn]] __attribute__((noinline, cold)) void null_output_slot(const NodePlan& plan, std::uint32_t k,
                                                                   std::size_t ret) {
  throw CallError(plan.label + ": output tensor slot " + std::to_string(k) + " (return " + std::to_string(ret) +
                  ") is a null handle");
}

const at::Tensor& input_tensor(const NodePlan& plan, const Fill& f, AtenTensorHandle* tensors, std::uint32_t k) {
  const auto* t = reinterpret_cast<const at::Tensor*>(tensors[k]);
  if (C10_UNLIKELY(t == nullptr || !t->defined())) bad_input_tensor(plan, f, t, k);
  return *t;
}

at::Tensor& output_slot(const NodePlan& plan, AtenTensorHandle* tensors, std::uint32_t k, std::size_t ret) {
  auto* t = reinterpret_cast<at::Tensor*>(tensors[k]);
  if (C10_UNLIKELY(t == nullptr)) null_output_slot(plan, k, ret);
  return *t;
}

// Python's `type(r).__name__` for the kinds a return can wrongly be.
std::string kind_of(const c10::IValue& v) {
  if (v.isNone() || (v.isTensor() && !v.toTensor().defined())) return "NoneType";
  if (v.isTensor()) return "Tensor";
  if (v.isList()) return "list";
  if (v.isInt()) return "int";
  if (v.isDouble()) return "float";
  if (v.isBool()) return "bool";
  return v.tagKind();
}

void store_outputs(const NodePlan& plan, std::vector<c10::IValue>& stack, const int64_t* ints,
                   AtenTensorHandle* tensors) {
  if (stack.size() != plan.num_returns)
    throw CallError(plan.label + ": the op left " + std::to_string(stack.size()) + " values on the stack, its schema "
                    "returns " + std::to_string(plan.num_returns));
  for (std::size_t i = 0; i < plan.outputs.size(); ++i) {
    const Output& o = plan.outputs[i];
    c10::IValue& r = stack[i];
    switch (o.kind) {
      case OutKind::Tensor:
        // An undefined tensor is None to Python (and so to the Python executor).
        if (!r.isTensor() || !r.toTensor().defined())
          throw CallError(message(Message::RETURN_NOT_A_TENSOR,
                                  {{"label", plan.label}, {"index", std::to_string(i)}, {"type", kind_of(r)}}));
        output_slot(plan, tensors, o.slot, i) = std::move(r).toTensor();
        break;
      case OutKind::Tensors: {
        if (!r.isTensorList())
          throw CallError(plan.label + ": return " + std::to_string(i) + " should be a list of Tensors, the op returned " +
                          kind_of(r));
        auto list = std::move(r).toTensorList();
        if (list.size() != o.extra)
          throw CallError(message(Message::RETURN_LIST_LENGTH, {{"label", plan.label},
                                                               {"index", std::to_string(i)},
                                                               {"count", std::to_string(list.size())},
                                                               {"slots", std::to_string(o.extra)}}));
        for (std::uint32_t k = 0; k < o.extra; ++k) output_slot(plan, tensors, o.slot + k, i) = list.get(k);
        break;
      }
      case OutKind::OptTensor: {
        bool none = r.isNone() || (r.isTensor() && !r.toTensor().defined());
        if (none != (o.extra == 0))
          throw CallError(message(Message::RETURN_NONE_CHANGED, {{"label", plan.label},
                                                                {"index", std::to_string(i)},
                                                                {"exported", o.extra == 0 ? "None" : "a Tensor"},
                                                                {"returned", none ? "None" : "a Tensor"}}));
        if (o.extra) output_slot(plan, tensors, o.slot, i) = std::move(r).toTensor();
        break;
      }
      case OutKind::Int: {
        std::optional<std::int64_t> value;
        if (r.isInt()) value = r.toInt();
        else if (r.isSymInt()) value = r.toSymInt().maybe_as_int();
        if (!value || *value != ints[o.slot])
          throw CallError(message(Message::INT_RETURN_CHANGED, {{"label", plan.label},
                                                               {"index", std::to_string(i)},
                                                               {"value", value ? std::to_string(*value) : kind_of(r)},
                                                               {"expected", std::to_string(ints[o.slot])},
                                                               {"slot", std::to_string(o.slot)}}));
        break;
      }
      case OutKind::None: break;
    }
  }
}

// A Python number passed for `Tensor` travels as a 0-dim tensor; the dispatcher's Python binding
// would wrap the number again (double/long/complex-double/bool, wrapped_number set), which is what
// keeps its weak type-promotion semantics. Do the same.
at::Tensor rewrap_number(const at::Tensor& t) {
  c10::Scalar s = t.item();
  c10::ScalarType type = s.isFloatingPoint() ? c10::kDouble
                         : s.isComplex()     ? c10::kComplexDouble
                         : s.isBoolean()     ? c10::kBool
                                             : c10::kLong;
  at::Tensor w = at::scalar_tensor(s, at::TensorOptions().dtype(type).device(c10::kCPU));
  w.unsafeGetTensorImpl()->set_wrapped_number(true);
  return w;
}

// Pushes the value a dynamic argument takes from the arrays onto `stack`.
void push_fill(std::vector<c10::IValue>& stack, const NodePlan& plan, const Fill& f, const int64_t* ints,
               AtenTensorHandle* tensors) {
  switch (f.kind) {
    case FillKind::Tensor: stack.emplace_back(input_tensor(plan, f, tensors, f.start)); return;
    case FillKind::Int: stack.emplace_back(ints[f.start]); return;
    case FillKind::Wrapped: stack.emplace_back(rewrap_number(input_tensor(plan, f, tensors, f.start))); return;
    case FillKind::Tensors: {
      c10::List<at::Tensor> list;
      list.reserve(f.count);
      for (std::uint32_t k = 0; k < f.count; ++k) list.push_back(input_tensor(plan, f, tensors, f.start + k));
      stack.emplace_back(std::move(list));
      return;
    }
    case FillKind::OptTensors: {
      c10::List<std::optional<at::Tensor>> list;
      list.reserve(f.pattern.size());
      std::uint32_t k = f.start;
      for (bool present : f.pattern) {
        if (present) list.push_back(input_tensor(plan, f, tensors, k++));
        else list.push_back(std::nullopt);
      }
      stack.emplace_back(std::move(list));
      return;
    }
    case FillKind::Ints: stack.emplace_back(c10::List<int64_t>(c10::ArrayRef<int64_t>(ints + f.start, f.count))); return;
    case FillKind::ScalarInts: {
      c10::impl::GenericList list(c10::NumberType::get());
      list.reserve(f.count);
      for (std::uint32_t k = 0; k < f.count; ++k) list.push_back(c10::IValue(ints[f.start + k]));
      stack.emplace_back(std::move(list));
      return;
    }
  }
  throw std::logic_error("externspec: no fill for kind " + std::to_string(static_cast<int>(f.kind)));
}

// The boxed stack of a call. Each thread keeps one vector for its calls so that a call does not
// allocate; only its capacity outlives the call: the values are cleared on the way out (returned or
// thrown), so no tensor is held past its call. A call made while the thread's vector is in use (a
// kernel that runs a model through this executor) gets a vector of its own.
struct CallStack {
  struct Scratch {
    std::vector<c10::IValue> stack;
    bool busy = false;
  };
  static thread_local Scratch scratch;

  CallStack() : shared(scratch), owner(!shared.busy), stack(owner ? shared.stack : own.emplace()) {
    shared.busy = true;
  }
  ~CallStack() {
    stack.clear();
    if (owner) shared.busy = false;
  }
  CallStack(const CallStack&) = delete;
  CallStack& operator=(const CallStack&) = delete;

  Scratch& shared;
  bool owner;
  std::optional<std::vector<c10::IValue>> own;  // a re-entrant call's
  std::vector<c10::IValue>& stack;
};
thread_local CallStack::Scratch CallStack::scratch;

}  // namespace

ProxyExecutor::ProxyExecutor(std::string_view json, CustomObjects custom_objects, std::vector<std::string> allow_ops,
                             std::optional<c10::Device> device, std::optional<CallLayout> call_layout,
                             const std::optional<std::vector<CallLengths>>& call_lengths, const Limits& limits)
    : custom_objects_(std::move(custom_objects)), device_(device) {
  for (const auto& entry : allow_ops)
    if (!is_allow_pattern(entry))
      throw std::invalid_argument(message(Message::ALLOW_OPS_ENTRY, {{"entry", "'" + entry + "'"}}));
  ExternKernelNodes spec = decode<ExternKernelNodes>(json, false, limits.max_json_bytes);
  // Node names are the buffers torch generated them for: a repeat means the spec was not written by
  // one export, and errors naming that node would be ambiguous.
  std::unordered_map<std::string_view, std::size_t> seen;
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    auto [it, fresh] = seen.emplace(spec.nodes[i].name, i);
    if (!fresh) {
      SpecMismatchError e(message(Message::NODE_NAME_REPEATED, {{"first", std::to_string(it->second)},
          {"index", std::to_string(i)}, {"name", spec.nodes[i].name}}));
      e.node = i;
      throw e;
    }
  }
  const std::optional<CallLayout> layout =
      planned_layout(spec.schema_version.has_value(), spec.call_layout, call_layout);
  choice_ = std::make_unique<LayoutChoice>(layout);
  auto plan = [&](std::size_t i, CallLayout as) {
    try {
      return plan_node(i, spec.nodes[i], custom_objects_, as, allow_ops, device_);
    } catch (NodeError& e) {  // the errors of planning node i are about node i
      e.node = i;
      throw;
    }
  };
  const CallLayout plan_as = layout.value_or(CallLayout::OMITTED_DEFAULTS_PASSED);
  plans_.reserve(spec.nodes.size());
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) plans_.push_back(plan(i, plan_as));
  if (!layout)  // "auto": the other candidate, only where the two differ
    for (std::size_t i = 0; i < plans_.size(); ++i)
      if (plans_[i].passed_default_ints > 0) choice_->add(i, plan(i, CallLayout::NODE_ARGUMENTS), plans_[i]);
  if (call_lengths) choice_->decide_at_load(plans_, *call_lengths);
  choice_->apply(plans_);
}

ProxyExecutor::~ProxyExecutor() = default;

std::optional<CallLayout> ProxyExecutor::call_layout() const { return choice_->layout(); }

const NodePlan& ProxyExecutor::plan_for_call(int index, std::int64_t num_ints, std::int64_t num_tensors) const {
  if (index < 0 || static_cast<std::size_t>(index) >= plans_.size())
    throw CallError(message(Message::NODE_INDEX_OUT_OF_RANGE,
                            {{"index", std::to_string(index)}, {"count", std::to_string(plans_.size())}}));
  const NodePlan& plan = plans_[static_cast<std::size_t>(index)];
  if (C10_LIKELY(num_ints == plan.num_ints && num_tensors == plan.num_tensors && !plan.layout_undecided)) return plan;
  if (const NodePlan* chosen = choice_->resolve(static_cast<std::size_t>(index), num_ints, num_tensors)) return *chosen;
  check_lengths(plan, num_ints, num_tensors);  // throws
  return plan;
}

void ProxyExecutor::check_lengths(const NodePlan& plan, std::int64_t num_ints, std::int64_t num_tensors) {
  if (num_tensors != plan.num_tensors || num_ints != plan.num_ints)
    throw CallError(message(Message::CALL_LENGTHS, {{"label", plan.label},
                                                    {"tensor_inputs", std::to_string(plan.num_input_tensors)},
                                                    {"tensor_outputs", std::to_string(plan.num_tensors - plan.num_input_tensors)},
                                                    {"int_inputs", std::to_string(plan.num_input_ints)},
                                                    {"int_outputs", std::to_string(plan.num_ints - plan.num_input_ints)},
                                                    {"num_tensors", std::to_string(num_tensors)},
                                                    {"num_ints", std::to_string(num_ints)}}));
}

std::exception_ptr ProxyExecutor::take_last_error() {
  std::exception_ptr e = last_error;
  last_error = nullptr;
  return e;
}

void ProxyExecutor::call_function(int extern_node_index, int num_ints, int64_t* flatten_int_args, int num_tensors,
                             AtenTensorHandle* flatten_tensor_args) {
  try {
    run(extern_node_index, num_ints, flatten_int_args, num_tensors, flatten_tensor_args);
  } catch (...) {
    // The first failure of a run: a model that ignores the status (torch 2.11, 2.12) calls on.
    if (!last_error) last_error = std::current_exception();
    throw;
  }
}

void ProxyExecutor::run(int index, int num_ints, const int64_t* ints, int num_tensors, AtenTensorHandle* tensors) const {
  const NodePlan& plan = plan_for_call(index, num_ints, num_tensors);
  if ((num_ints > 0 && ints == nullptr) || (num_tensors > 0 && tensors == nullptr))
    throw CallError(plan.label + ": null " + (num_ints > 0 && ints == nullptr ? "int" : "tensor") + " array");

  CallStack lease;
  std::vector<c10::IValue>& stack = lease.stack;
  auto fill = plan.fills.begin();  // in stack order, at most one per entry (plan_node appends them so)
  for (std::size_t i = 0; i < plan.stack.size(); ++i) {
    if (fill == plan.fills.end() || fill->stack_index != i) {
      stack.push_back(plan.stack[i]);
    } else {
      push_fill(stack, plan, *fill, ints, tensors);
      ++fill;
    }
  }
  if (C10_UNLIKELY(!plan.checks.empty())) check_call(plan, static_cast<std::size_t>(index), stack);
  plan.call(stack);
  store_outputs(plan, stack, ints, tensors);
}

}  // namespace externspec
