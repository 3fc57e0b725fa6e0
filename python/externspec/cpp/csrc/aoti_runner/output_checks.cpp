#include "aoti_runner/output_checks.h"

#include <ATen/ops/empty_strided.h>

#include <externspec/torch/errors.h>

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
std::string difference(const at::Tensor& t, const std::vector<Expr>& sizes, const std::vector<Expr>& strides,
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

OutputChecks::OutputChecks(const std::vector<RecordedOutput>& records,
                           std::unordered_map<std::string, std::size_t>& symbols, std::vector<std::string>& names) {
  for (const auto& r : records) {
    Output o{r.slot, r.buffer, r.sizes, {}, {}};
    for (const auto& s : r.sizes) o.sizes.push_back(parse_expr(s, symbols, names));
    for (const auto& s : r.strides) o.strides.push_back(parse_expr(s, symbols, names));
    by_node_[r.node].push_back(std::move(o));
  }
}

void OutputChecks::check(std::size_t node, const externspec::ProxyExecutor& plans, int num_tensors,
                         AtenTensorHandle* tensors, const SymbolValues& values) const {
  auto found = by_node_.find(node);
  if (found == by_node_.end()) return;
  for (const Output& o : found->second) {
    if (o.slot >= static_cast<std::size_t>(num_tensors) || tensors[o.slot] == nullptr) continue;
    auto* slot = reinterpret_cast<at::Tensor*>(tensors[o.slot]);
    if (!slot->defined()) continue;  // an optional output the op left None
    std::string why = difference(*slot, o.sizes, o.strides, values);
    if (why.empty()) continue;
    const std::string label = node < plans.size() ? plans.plan(node).label : "node " + std::to_string(node);
    CallError error(label + ": output `" + o.buffer + "` (tensor slot " + std::to_string(o.slot) + ") " + why +
                    ": the op returned another shape than the package was compiled for");
    error.node = node;
    if (auto shape = concrete(o.sizes, o.strides, values))
      *slot = at::empty_strided(shape->first, shape->second, slot->options());
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
