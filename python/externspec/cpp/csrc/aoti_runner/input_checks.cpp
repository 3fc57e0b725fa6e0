#include "aoti_runner/input_checks.h"

#include <c10/util/safe_numerics.h>

#include <cctype>
#include <charconv>
#include <sstream>

#include <externspec/torch/errors.h>

namespace externspec {
namespace detail {

Expr parse_expr(std::string_view text, std::unordered_map<std::string, std::size_t>& symbols,
                std::vector<std::string>& names) {
  Expr e;
  while (true) {
    auto star = text.find('*');
    std::string_view term = text.substr(0, star);
    while (!term.empty() && term.front() == ' ') term.remove_prefix(1);
    while (!term.empty() && term.back() == ' ') term.remove_suffix(1);
    if (term.empty()) return {};
    if ((term.front() >= '0' && term.front() <= '9') || term.front() == '-') {
      if (term.back() == 'L') term.remove_suffix(1);
      std::int64_t v = 0;
      auto [end, ec] = std::from_chars(term.data(), term.data() + term.size(), v);
      if (ec != std::errc() || end != term.data() + term.size() || c10::mul_overflows(e.factor, v, &e.factor))
        return {};
    } else {
      for (char c : term)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return {};
      auto [it, fresh] = symbols.emplace(std::string(term), names.size());
      if (fresh) names.emplace_back(term);
      e.symbols.push_back(it->second);
    }
    if (star == std::string_view::npos) break;
    text.remove_prefix(star + 1);
  }
  e.known = true;
  return e;
}

std::optional<std::int64_t> eval(const Expr& e, const std::vector<std::optional<std::int64_t>>& values) {
  if (!e.known) return std::nullopt;
  std::int64_t v = e.factor;
  for (auto s : e.symbols)
    if (!values[s] || c10::mul_overflows(v, *values[s], &v)) return std::nullopt;
  return v;
}


namespace {

using detail::eval;
using detail::Expr;
using detail::parse_expr;

std::string join(c10::IntArrayRef values) {
  std::string out = "[";
  for (std::size_t d = 0; d < values.size(); ++d) out += (d ? ", " : "") + std::to_string(values[d]);
  return out + "]";
}

std::string shape_text(const std::vector<std::string>& want) {
  std::string out = "[";
  for (std::size_t d = 0; d < want.size(); ++d) {
    bool literal = !want[d].empty() && want[d].find_first_not_of("-0123456789L") == std::string::npos;
    out += (d ? ", " : "") + (literal ? want[d].substr(0, want[d].find('L')) : std::string("*"));
  }
  return out + "]";
}

}  // namespace

InputChecks::InputChecks(std::vector<RecordedInput> records, c10::Device device, std::string name)
    : records_(std::move(records)), device_(device), name_(std::move(name)) {
  for (const auto& in : records_) {
    Input c;
    for (const auto& s : in.sizes) c.sizes.push_back(parse_expr(s, numbers_, symbols_));
    for (const auto& s : in.strides) c.strides.push_back(parse_expr(s, numbers_, symbols_));
    inputs_.push_back(std::move(c));
  }
}

namespace {

std::string input_name(std::size_t i) { return "input " + std::to_string(i); }

// An input the kernels can read: a plain tensor with data behind every element it addresses, as
// eager kernels require. A FakeTensor, a `_make_wrapper_subclass` tensor (a Python subclass that
// dispatches to Python, often with no storage), a meta tensor or a view past its storage is
// refused (the kernels read the data pointer directly: SIGSEGV or other memory).
template <class Who>
void check_storage(const at::Tensor& t, const Who& who) {
  if (t.key_set().has(c10::DispatchKey::Python))
    throw CallError(who() + " is a tensor subclass that dispatches to Python (e.g. a FakeTensor or a "
                    "_make_wrapper_subclass tensor): the compiled model reads tensor data directly");
  if (!t.has_storage())
    throw CallError(who() + " has no storage (e.g. a wrapper subclass or a meta tensor): the compiled model reads "
                    "tensor data directly");
  if (t.numel() == 0) return;
  const at::Storage& storage = t.storage();
  // The farthest element the sizes and strides reach, which the storage must hold.
  std::int64_t last = t.storage_offset(), step = 0;
  bool reachable = last >= 0;
  for (std::int64_t d = 0; d < t.dim() && reachable; ++d)
    if (t.size(d) > 1)
      reachable = t.stride(d) >= 0 && !c10::mul_overflows(t.size(d) - 1, t.stride(d), &step) &&
                  !c10::add_overflows(last, step, &last);
  const auto held = storage.nbytes() / static_cast<std::size_t>(t.element_size());
  if (storage.data() == nullptr || !reachable || static_cast<std::uint64_t>(last) >= held)
    throw CallError(who() + " reaches past its storage of " + std::to_string(storage.nbytes()) +
                    " bytes (its data is missing, or a view's sizes and strides address more)");
}

// A bool input holds 0 or 1 in each byte: compiled kernels take that as given (a bool used as an
// index, `table[m.long()]`, has its bounds check folded away by the C++ compiler), so a byte of 200
// from a client read row 200 of a 2-row table (server memory in the reply) and its write twin
// corrupted the heap. Checked before the run, as ATen's own kernels need not.
template <class Who>
void check_bool_values(const at::Tensor& t, const Who& who) {
  if (t.scalar_type() != at::kBool || t.numel() == 0) return;
  std::int64_t at_element = -1;
  std::uint8_t value = 0;
  if (t.is_cpu() && t.is_contiguous()) {
    const auto* bytes = static_cast<const std::uint8_t*>(t.const_data_ptr());
    const std::int64_t n = t.numel();
    std::uint8_t any = 0;
    for (std::int64_t k = 0; k < n; ++k) any |= bytes[k];  // vectorized; the slow search only on failure
    if (any > 1)
      for (std::int64_t k = 0; k < n; ++k)
        if (bytes[k] > 1) {
          at_element = k;
          value = bytes[k];
          break;
        }
  } else {  // strided, or on a GPU: ATen finds it, on the tensor's device
    const at::Tensor bad = t.view(at::kByte).gt(1).flatten();
    if (bad.any().item<bool>()) {
      at_element = bad.nonzero()[0][0].item<std::int64_t>();
      value = t.view(at::kByte).flatten()[at_element].item<std::uint8_t>();
    }
  }
  if (at_element >= 0)
    throw CallError(who() + " is a bool tensor whose element " + std::to_string(at_element) + " holds the byte " +
                    std::to_string(value) + ": a bool is stored as the byte 0 or 1, and compiled kernels trust "
                    "that (another value can make them read or write out of bounds)");
}

}  // namespace

void InputChecks::check(const std::vector<at::Tensor>& inputs, SymbolValues& values) const {
  if (inputs.size() != records_.size())
    throw CallError(name_ + ": the model takes " + std::to_string(records_.size()) + " inputs, got " +
                    std::to_string(inputs.size()));
  // Per-run state lives in thread-local buffers and error text is built only on failure: the
  // checks run before every forward, so the passing path allocates nothing.
  thread_local std::vector<std::pair<std::size_t, std::size_t>> bound_at;
  values.assign(symbols_.size(), std::nullopt);
  bound_at.assign(symbols_.size(), {0, 0});
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& t = inputs[i];
    const RecordedInput& want = records_[i];
    const auto who = [&] { return name_ + ": " + input_name(i); };
    if (!t.defined()) throw CallError(who() + " is an undefined tensor");
    if (t.layout() != c10::kStrided) {
      std::ostringstream layout;
      layout << t.layout();
      throw CallError(who() + " has layout " + layout.str() + ", the model takes strided tensors");
    }
    c10::DeviceType device_type = want.device_type.value_or(device_.type());
    if (t.device().type() != device_type || (device_.has_index() && device_type == device_.type() &&
                                             t.device().index() != device_.index()))
      throw CallError(who() + " is on " + t.device().str() + ", the model runs on " +
                      (device_type == device_.type() ? device_.str() : c10::DeviceTypeName(device_type, true)));
    check_storage(t, who);
    if (want.dtype && t.scalar_type() != *want.dtype)
      throw CallError(who() + " has dtype " + c10::toString(t.scalar_type()) + ", the model was compiled for " +
                      c10::toString(*want.dtype));
    check_bool_values(t, who);
    if (t.is_conj() || t.is_neg())
      throw CallError(who() + " is a lazy conjugate or negative view: call resolve_conj() / resolve_neg() first");
    if (want.rank && static_cast<std::size_t>(t.dim()) != *want.rank)
      throw CallError(who() + " has shape " + join(t.sizes()) + ", the model was compiled for " +
                      shape_text(want.sizes) + " (* = dynamic)");
    // Sizes: literals must match; a symbol takes the first size it meets and must agree elsewhere.
    const auto& sizes = inputs_[i].sizes;
    const c10::IntArrayRef got_sizes = t.sizes();
    for (std::size_t d = 0; d < sizes.size() && d < got_sizes.size(); ++d) {
      const Expr& e = sizes[d];
      std::int64_t got = got_sizes[d];
      if (e.known && e.factor == 1 && e.symbols.size() == 1 && !values[e.symbols[0]]) {
        values[e.symbols[0]] = got;
        bound_at[e.symbols[0]] = {i, d};
        continue;
      }
      auto v = eval(e, values);
      if (v && *v != got) {
        std::string why = e.symbols.empty()
                              ? "the model was compiled for " + shape_text(want.sizes) + " (* = dynamic)"
                              : "size " + std::to_string(d) + " is " + want.sizes[d] + " = " + std::to_string(*v) +
                                    " (" + symbols_[e.symbols[0]] + " is size " +
                                    std::to_string(bound_at[e.symbols[0]].second) + " of " +
                                    input_name(bound_at[e.symbols[0]].first) + ")";
        throw CallError(who() + " has shape " + join(t.sizes()) + ", " + why);
      }
    }
    for (const auto& [d, lo] : want.min_size)
      if (d < static_cast<std::size_t>(t.dim()) && t.size(static_cast<std::int64_t>(d)) < lo)
        throw CallError(who() + " has shape " + join(t.sizes()) + ": size " + std::to_string(d) +
                        (want.max_size.count(d) && want.max_size.at(d) == lo ? " must be " : " must be at least ") +
                        std::to_string(lo));
    for (const auto& [d, hi] : want.max_size)
      if (d < static_cast<std::size_t>(t.dim()) && t.size(static_cast<std::int64_t>(d)) > hi)
        throw CallError(who() + " has shape " + join(t.sizes()) + ": size " + std::to_string(d) +
                        (want.min_size.count(d) && want.min_size.at(d) == hi ? " must be " : " must be at most ") +
                        std::to_string(hi));
  }
  // Strides, once every symbol is bound. A dimension of size 1 is never stepped over.
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& t = inputs[i];
    const auto& strides = inputs_[i].strides;
    if (t.numel() == 0) continue;
    const c10::IntArrayRef got_sizes = t.sizes(), got_strides = t.strides();
    for (std::size_t d = 0; d < strides.size() && d < got_sizes.size(); ++d) {
      auto v = eval(strides[d], values);
      if (v && got_sizes[d] > 1 && *v != got_strides[d]) {
        std::string want;
        for (std::size_t k = 0; k < strides.size(); ++k) {
          auto w = eval(strides[k], values);
          want += (k ? ", " : "") + (w ? std::to_string(*w) : std::string("*"));
        }
        throw CallError(name_ + ": " + input_name(i) + " has strides " + join(t.strides()) +
                        ", the model was compiled for strides [" + want + "] (call .contiguous() on it)");
      }
    }
  }
}

}  // namespace detail
}  // namespace externspec
