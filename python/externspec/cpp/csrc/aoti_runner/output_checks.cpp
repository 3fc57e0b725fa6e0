#include "aoti_runner/output_checks.h"

#include <ATen/ops/empty_strided.h>

#include <algorithm>
#include <limits>

#include <externspec/torch/errors.h>

#include "executor/ops.h"

namespace externspec::detail {
namespace {

std::string listed(c10::IntArrayRef values) {
  std::string out = "[";
  for (std::size_t d = 0; d < values.size(); ++d) out += (d ? ", " : "") + std::to_string(values[d]);
  return out + "]";
}

// The recorded sizes or strides under the bound symbols, `*` where one is not known.
std::string expected(const std::vector<Expr>& exprs, const SymbolValues& values) {
  std::string out = "[";
  for (std::size_t d = 0; d < exprs.size(); ++d) {
    auto v = eval(exprs[d], values);
    out += (d ? ", " : "") + (v ? std::to_string(*v) : std::string("*"));
  }
  return out + "]";
}

// The first way `t` differs from the recorded sizes and strides ("" if none). A stride is compared
// only where its dimension has more than one element (never stepped over otherwise).
std::string shape_difference(const at::Tensor& t, const std::vector<Expr>& sizes, const std::vector<Expr>& strides,
                             const SymbolValues& values) {
  bool same = static_cast<std::size_t>(t.dim()) == sizes.size();
  for (std::size_t d = 0; same && d < sizes.size(); ++d) {
    auto v = eval(sizes[d], values);
    same = !v || *v == t.size(static_cast<std::int64_t>(d));
  }
  if (!same) return "has shape " + listed(t.sizes()) + ", the compiled code expects " + expected(sizes, values);
  if (t.numel() == 0) return {};
  for (std::size_t d = 0; d < strides.size(); ++d) {
    const auto k = static_cast<std::int64_t>(d);
    if (auto v = eval(strides[d], values); v && t.size(k) > 1 && *v != t.stride(k))
      return "has strides " + listed(t.strides()) + ", the compiled code expects " + expected(strides, values);
  }
  return {};
}

// The bytes a strided tensor's elements span in its storage, from the storage's start (nullopt on
// overflow); 0 for a tensor of no elements.
std::optional<std::uint64_t> bytes_spanned(const at::Tensor& t) {
  if (t.numel() == 0) return 0;
  unsigned __int128 last = static_cast<std::uint64_t>(t.storage_offset());
  for (std::int64_t d = 0; d < t.dim(); ++d)
    last += static_cast<unsigned __int128>(t.size(d) - 1) * static_cast<std::uint64_t>(t.stride(d));
  const unsigned __int128 bytes = (last + 1) * static_cast<std::uint64_t>(t.itemsize());
  if (bytes > std::numeric_limits<std::uint64_t>::max()) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

// True if none of the schema's returns aliases an argument (`Tensor(a)`, `Tensor(a!)`). One ATen op
// returns a view of its input without saying so: `_unsafe_view`, which decompositions and inductor
// call on an intermediate nothing else reads (lite-mode packages call it through the executor);
// no other registered view op lacks the annotation but the `_copy` ones, which copy.
std::optional<bool> returns_new_tensors(const c10::FunctionSchema& schema) {
  if (schema.name() == "aten::_unsafe_view") return false;
  for (const auto& r : schema.returns())
    if (r.alias_info() != nullptr) return false;
  return true;
}

// The same for the op named `op` (a target; the wrapper records `torch.ops.ns.op.overload`), or
// nullopt if no such op is registered.
std::optional<bool> returns_new_tensors(const std::string& op) {
  std::string_view ns, name, overload;
  if (op.empty() || !split_target(op, ns, name, overload)) return std::nullopt;
  auto handle = c10::Dispatcher::singleton().findSchema(
      {std::string(ns) + "::" + std::string(name), overload == "default" ? std::string() : std::string(overload)});
  if (!handle) return std::nullopt;
  return returns_new_tensors(handle->schema());
}

// The first tensor slot of a node's outputs (its input tensors come before); SIZE_MAX if none.
std::size_t first_output_slot(const NodePlan& plan) {
  std::size_t first = std::numeric_limits<std::size_t>::max();
  for (const auto& out : plan.outputs)
    if (out.kind == OutKind::Tensor || out.kind == OutKind::Tensors || out.kind == OutKind::OptTensor)
      first = std::min<std::size_t>(first, out.slot);
  return first;
}

// The recorded shape as concrete sizes and strides, if every one is known.
std::optional<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> concrete(
    const std::vector<Expr>& sizes, const std::vector<Expr>& strides, const SymbolValues& values) {
  std::vector<std::int64_t> sz, st;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    auto a = eval(sizes[d], values), b = eval(strides[d], values);
    if (!a || !b || *a < 0 || *b < 0) return std::nullopt;
    sz.push_back(*a);
    st.push_back(*b);
  }
  return std::make_pair(std::move(sz), std::move(st));
}

}  // namespace

OutputChecks::OutputChecks(const std::vector<RecordedOutput>& records, const externspec::ProxyExecutor& plans,
                           c10::Device device, std::unordered_map<std::string, std::size_t>& symbols,
                           std::vector<std::string>& names)
    : device_(device), by_node_(plans.size()) {
  for (const auto& r : records) {
    if (r.node >= plans.size()) continue;  // no such node: the executor refuses the call itself
    const NodePlan& plan = plans.plan(r.node);
    // What the compiled code relies on is the op it was compiled for (the record's); a record
    // that names none, or an op not registered here, falls back to the node's own.
    const bool fresh = returns_new_tensors(r.op).value_or(*returns_new_tensors(plan.schema()));
    Output o{r.slot, r.buffer, r.dtype, fresh, {}, {}};
    for (const auto& s : r.sizes) o.sizes.push_back(parse_expr(s, symbols, names));
    for (const auto& s : r.strides) o.strides.push_back(parse_expr(s, symbols, names));
    Node& node = by_node_[r.node];
    node.num_inputs = std::min(node.outputs.empty() ? first_output_slot(plan) : node.num_inputs, r.slot);
    node.outputs.push_back(std::move(o));
    empty_ = false;
  }
}

std::string OutputChecks::difference(const Output& o, const Node& n, const at::Tensor& t, int num_tensors,
                                     AtenTensorHandle* tensors, const SymbolValues& values) const {
  if (t.device() != device_) return "is on " + t.device().str() + ", the model runs on " + device_.str();
  if (t.layout() != at::kStrided) return "has layout " + c10::str(t.layout()) + ", the compiled code expects Strided";
  if (std::string why = shape_difference(t, o.sizes, o.strides, values); !why.empty()) return why;
  if (o.dtype && t.scalar_type() != *o.dtype)
    return std::string("has dtype ") + c10::toString(t.scalar_type()) + ", the compiled code expects " +
           c10::toString(*o.dtype);
  if (t.numel() == 0) return {};
  const auto spanned = bytes_spanned(t);
  const std::uint64_t held = t.has_storage() ? t.storage().nbytes() : 0;
  if (!spanned || *spanned > held)
    return "spans " + (spanned ? std::to_string(*spanned) : std::string("more than 2^64")) +
           " bytes of a storage of " + std::to_string(held) + " bytes";
  if (!o.fresh) return {};
  const auto inputs = std::min<std::size_t>(n.num_inputs, static_cast<std::size_t>(num_tensors));
  for (std::size_t k = 0; k < inputs; ++k) {
    if (tensors[k] == nullptr) continue;
    const auto* in = reinterpret_cast<const at::Tensor*>(tensors[k]);
    if (in->defined() && in->has_storage() && in->storage().nbytes() > 0 && in->storage().is_alias_of(t.storage()))
      return "shares storage with input tensor slot " + std::to_string(k) +
             ", where the op the package was compiled for returns a new tensor";
  }
  return {};
}

void OutputChecks::check(std::size_t node, const externspec::ProxyExecutor& plans, int num_tensors,
                         AtenTensorHandle* tensors, const SymbolValues& values) const {
  if (node >= by_node_.size()) return;
  const Node& n = by_node_[node];
  for (const Output& o : n.outputs) {
    if (o.slot >= static_cast<std::size_t>(num_tensors) || tensors[o.slot] == nullptr) continue;
    auto* slot = reinterpret_cast<at::Tensor*>(tensors[o.slot]);
    if (!slot->defined()) continue;  // an optional output the op left None
    std::string why = difference(o, n, *slot, num_tensors, tensors, values);
    if (why.empty()) continue;
    const std::string label = node < plans.size() ? plans.plan(node).label : "node " + std::to_string(node);
    CallError error(label + ": output `" + o.buffer + "` (tensor slot " + std::to_string(o.slot) + ") " + why +
                    ": the op returned another tensor than the package was compiled for");
    error.node = node;
    if (auto shape = concrete(o.sizes, o.strides, values))
      *slot = at::empty_strided(shape->first, shape->second,
                                at::TensorOptions().dtype(o.dtype.value_or(slot->scalar_type())).device(device_));
    throw error;
  }
}

void CheckedExecutor::call_function(int extern_node_index, int num_ints, int64_t* flatten_int_args, int num_tensors,
                                    AtenTensorHandle* flatten_tensor_args) {
  try {
    inner_->call_function(extern_node_index, num_ints, flatten_int_args, num_tensors, flatten_tensor_args);
  } catch (...) {
    failed_ = true;
    throw;
  }
  try {
    checks_.check(static_cast<std::size_t>(extern_node_index), plans_, num_tensors, flatten_tensor_args, values_);
  } catch (...) {
    if (!failed_) error_ = std::current_exception();
    failed_ = true;
    throw;
  }
}

}  // namespace externspec::detail
