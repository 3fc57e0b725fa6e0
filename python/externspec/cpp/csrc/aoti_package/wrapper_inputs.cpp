#include "aoti_package/wrapper_inputs.h"

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include <externspec/torch/errors.h>

namespace externspec::detail {
namespace {

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool eat(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

std::string_view ident(std::string_view& s) {
  std::size_t n = 0;
  while (n < s.size() && is_ident_char(s[n])) ++n;
  auto out = s.substr(0, n);
  s.remove_prefix(n);
  return out;
}

// An integer literal as the wrapper writes it (`-3`, `4L`).
std::optional<std::int64_t> integer(std::string_view& s) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  eat(s, "L");
  return v;
}

// `VAR_size[D]` / `VAR_stride[D]` with the given suffix: (VAR, D).
std::optional<std::pair<std::string_view, std::size_t>> indexed(std::string_view& s, std::string_view suffix) {
  std::string_view id = ident(s);
  if (id.size() <= suffix.size() || id.substr(id.size() - suffix.size()) != suffix || !eat(s, "[")) return std::nullopt;
  auto d = integer(s);
  if (!d || *d < 0 || !eat(s, "]")) return std::nullopt;
  return std::make_pair(id.substr(0, id.size() - suffix.size()), static_cast<std::size_t>(*d));
}

// A tensor's rank as the wrapper may record it: more is refused, so that what a line records
// costs at most its own bytes (a 60 MiB `assert_size_stride` line of one-character sizes made
// 15 million strings, +1.1 GB).
constexpr std::size_t kMaxRank = 1024;

// `{a, b*c, ...}` -> its items, trimmed; nullopt if the braces do not close on this line. Sets
// `too_many` (and returns nullopt) past kMaxRank items.
std::optional<std::vector<std::string>> brace_list(std::string_view& s, bool& too_many) {
  if (!eat(s, "{")) return std::nullopt;
  auto close = s.find('}');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view body = s.substr(0, close);
  s.remove_prefix(close + 1);
  std::vector<std::string> items;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= body.size(); ++i) {
    char c = i < body.size() ? body[i] : ',';
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      auto item = trim(body.substr(start, i - start));
      if (!item.empty() && items.size() == kMaxRank) {
        too_many = true;
        return std::nullopt;
      }
      if (!item.empty()) items.emplace_back(item);
      start = i + 1;
    }
  }
  return items;
}

std::optional<c10::ScalarType> scalar_type_named(std::string_view k_name) {
  // `kFloat` -> c10::ScalarType::Float, by c10's own names.
  if (!eat(k_name, "k")) return std::nullopt;
  for (int i = 0; i < static_cast<int>(c10::ScalarType::NumOptions); ++i) {
    auto t = static_cast<c10::ScalarType>(i);
    if (k_name == c10::toString(t)) return t;
  }
  return std::nullopt;
}

// What the input check of torch 2.11 and 2.12 (`check_input_N`) and the symbol bindings of
// `run_impl` state about one input's shape, for a wrapper with no `assert_size_stride(..., "input")`.
struct Checked {
  bool declared = false;                         // auto VAR_size = VAR.sizes();
  std::map<std::size_t, std::string> sizes;      // dimension -> literal or bound symbol
  std::map<std::size_t, std::string> strides;    // dimension -> literal or bound symbol
  std::map<std::size_t, bool> size_checked;      // dimensions with a size check (literal or range)
};

struct Parser {
  const std::string& label;
  const std::vector<std::string>& names;  // the library's input names, or empty
  std::size_t line_number = 0;
  std::size_t num_inputs;
  std::vector<RecordedInput> specs;
  std::unordered_map<std::string, std::size_t> index_of;  // wrapper variable -> input index
  std::vector<Checked> checked = std::vector<Checked>(num_inputs);
  bool lower_bound_checks = false;  // some `if (VAR_size[D] < LO)`: every dynamic size has a check
  bool binds_symbols = false;       // some `int64_t SYM = VAR_size[D];`: the model has dynamic sizes

  Checked* check(std::string_view var) {
    auto it = index_of.find(std::string(var));
    return it == index_of.end() ? nullptr : &checked[it->second];
  }

  RecordedInput* spec(std::string_view var) {
    auto it = index_of.find(std::string(var));
    return it == index_of.end() ? nullptr : &specs[it->second];
  }

  void bind(std::string_view var, std::string_view& rest, std::string_view close) {
    if (!eat(rest, "[")) return;
    auto i = integer(rest);
    if (!i || *i < 0 || static_cast<std::uint64_t>(*i) >= num_inputs || !eat(rest, close)) return;
    const auto index = static_cast<std::size_t>(*i);
    if (index < names.size() && names[index] != var) return;  // not the library's name for it
    index_of[std::string(var)] = index;
  }

  // One line of the wrapper source: the statement forms below, tried in this order; any other line,
  // or one of these forms with other words in it, records nothing.
  void line(std::string_view s) {
    s = trim(s);
    std::string_view rest = s;
    // First: the line `if (...) { assert_size_stride(VAR, ...); }` starts with `if`.
    if (auto at = s.find("assert_size_stride("); at != std::string_view::npos)
      return assert_size_stride(s.substr(at + std::string_view("assert_size_stride(").size()));
    if (eat(rest, "ConstantHandle ")) {  // ConstantHandle VAR = ConstantHandle(input_handles[N]);
      std::string_view var = ident(rest);
      if (eat(rest, " = ConstantHandle(input_handles")) bind(var, rest, "]);");
      return;
    }
    if (eat(rest, "int64_t ")) return symbol_binding(rest);
    if (eat(rest, "auto ")) return auto_declaration(rest);
    if (eat(rest, "int32_t ")) return expected_device_type(rest);
    if (eat(rest, "if (")) {
      if (auto k = integer(rest)) return literal_check(*k, rest);
      return range_check(rest);
    }
    if (auto at = s.find("_expected_dtype << \"(at::"); at != std::string_view::npos) return expected_dtype(s, at);
  }

  // `VAR, {sizes}, {strides}, "input"); }` after `assert_size_stride(`.
  void assert_size_stride(std::string_view rest) {
    std::string_view var = ident(rest);
    RecordedInput* in = spec(var);
    if (!in || !eat(rest, ", ")) return;
    bool too_many = false;
    auto sizes = brace_list(rest, too_many);
    if (sizes && eat(rest, ", ")) {
      auto strides = brace_list(rest, too_many);
      if (strides && eat(rest, ", \"input\")") && strides->size() == sizes->size()) {
        in->rank = sizes->size();
        in->sizes = std::move(*sizes);
        in->strides = std::move(*strides);
      }
    }
    if (too_many)
      throw PackageError(label + ": line " + std::to_string(line_number) + ": the sizes or strides recorded for `" +
                         std::string(var) + "` list more than " + std::to_string(kMaxRank) + " dimensions");
  }

  // `SYM = VAR_size[D];`   /   `SYM = VAR_stride[D];` after `int64_t `.
  void symbol_binding(std::string_view rest) {
    std::string_view sym = ident(rest);
    if (sym.empty() || !eat(rest, " = ")) return;
    std::string_view probe = rest;
    bool is_size = true;
    auto at = indexed(probe, "_size");
    if (!at) {
      probe = rest;
      at = indexed(probe, "_stride");
      is_size = false;
    }
    if (!at || !eat(probe, ";") || !trim(probe).empty()) return;
    if (Checked* c = check(at->first)) {
      binds_symbols = true;
      (is_size ? c->sizes : c->strides).emplace(at->second, std::string(sym));
    }
  }

  // `VAR = std::move(inputs[N]);`   /   `VAR_size = VAR.sizes();` after `auto `.
  void auto_declaration(std::string_view rest) {
    std::string_view var = ident(rest);
    if (!eat(rest, " = ")) return;
    if (eat(rest, "std::move(inputs")) return bind(var, rest, "]);");
    constexpr std::string_view suffix = "_size";
    if (var.size() <= suffix.size() || var.substr(var.size() - suffix.size()) != suffix) return;
    std::string_view of = var.substr(0, var.size() - suffix.size());
    if (eat(rest, of) && eat(rest, ".sizes();") && rest.empty())
      if (Checked* c = check(of)) c->declared = true;
  }

  // `VAR_expected_device_type = T;` after `int32_t `.
  void expected_device_type(std::string_view rest) {
    std::string_view id = ident(rest);
    constexpr std::string_view suffix = "_expected_device_type";
    if (id.size() > suffix.size() && id.substr(id.size() - suffix.size()) == suffix && eat(rest, " = ")) {
      auto t = integer(rest);
      RecordedInput* in = spec(id.substr(0, id.size() - suffix.size()));
      if (in && t && *t >= 0 && *t < static_cast<std::int64_t>(c10::COMPILE_TIME_MAX_DEVICE_TYPES))
        in->device_type = static_cast<c10::DeviceType>(*t);
    }
  }

  // ` != VAR_size[D]) {`   /   ` != VAR_stride[D]) {` after `if (K`.
  void literal_check(std::int64_t k, std::string_view rest) {
    if (!eat(rest, " != ")) return;
    std::string_view probe = rest;
    if (auto sz = indexed(probe, "_size"); sz && eat(probe, ") {")) {
      if (RecordedInput* in = spec(sz->first)) in->min_size[sz->second] = in->max_size[sz->second] = k;
      if (Checked* c = check(sz->first)) {
        c->sizes[sz->second] = std::to_string(k);
        c->size_checked[sz->second] = true;
      }
      return;
    }
    probe = rest;
    if (auto st = indexed(probe, "_stride"); st && eat(probe, ") {")) {
      if (Checked* c = check(st->first)) c->strides[st->second] = std::to_string(k);
    }
  }

  // `VAR_size[D] < LO) {`   /   `VAR_size[D] > HI) {` after `if (`.
  void range_check(std::string_view rest) {
    auto sz = indexed(rest, "_size");
    if (!sz) return;
    bool below = eat(rest, " < ");
    if (!below && !eat(rest, " > ")) return;
    auto bound = integer(rest);
    RecordedInput* in = spec(sz->first);
    if (!bound || !in || !eat(rest, ") {")) return;
    check(sz->first)->size_checked[sz->second] = true;
    if (below) lower_bound_checks = true;
    // A lower bound of 2 is the compiler's assumption about every dynamic size (it never
    // specializes 0 and 1), whatever the model declared: Dim(min=1) and Dim(min=2) both write
    // `< 2`, and a Dim(min=1) model runs size 1 (torch's test_dynamic_cat). Only a higher bound
    // is known to be the model's own.
    if (below && *bound <= 2) return;
    (below ? in->min_size : in->max_size)[sz->second] = *bound;
  }

  // `<< "expected: " << VAR_expected_dtype << "(at::kFloat), "`, its `_expected_dtype` at `at` of `s`.
  void expected_dtype(std::string_view s, std::size_t at) {
    std::size_t start = at;
    while (start > 0 && is_ident_char(s[start - 1])) --start;
    std::string_view tail = s.substr(at + std::string_view("_expected_dtype << \"(at::").size());
    std::string_view name = ident(tail);
    RecordedInput* in = spec(s.substr(start, at - start));
    if (in && eat(tail, ")")) in->dtype = scalar_type_named(name);
  }

  // torch 2.11 and 2.12 write no `assert_size_stride(VAR, ..., "input")` (docs/torch-compat.md):
  // an input without one takes its rank, sizes and strides from its `check_input_N`, where every
  // dimension has a size check (a literal, or a range: the lower bound of a dynamic size is
  // checked unless `aot_inductor.check_lowerbound` was turned off, which the absence of every
  // lower-bound check in a model with dynamic sizes shows), each dynamic size and stride named
  // by the symbol `run_impl` binds to it. Anything less is no record: a dynamic size bound
  // elsewhere (another input's) cannot be checked against it, so the input stays unrecorded.
  void from_checks() {
    if (binds_symbols && !lower_bound_checks) return;
    for (std::size_t i = 0; i < num_inputs; ++i) {
      RecordedInput& in = specs[i];
      const Checked& c = checked[i];
      if (in.rank || !in.dtype || !c.declared) continue;
      const std::size_t rank = c.size_checked.size();  // dimensions 0..rank-1, each checked
      if (rank > kMaxRank || (rank && c.size_checked.rbegin()->first != rank - 1)) continue;
      if (c.sizes.size() != rank || c.strides.size() != rank) continue;
      std::vector<std::string> sizes, strides;
      for (std::size_t d = 0; d < rank; ++d) {
        auto size = c.sizes.find(d), stride = c.strides.find(d);
        if (size == c.sizes.end() || stride == c.strides.end()) break;
        sizes.push_back(size->second);
        strides.push_back(stride->second);
      }
      if (sizes.size() != rank) continue;  // a size or stride that nothing names
      in.rank = rank;
      in.sizes = std::move(sizes);
      in.strides = std::move(strides);
    }
  }
};

}  // namespace

std::vector<RecordedInput> recorded_inputs_from_wrapper(std::string_view source, std::size_t num_inputs,
                                                        const std::string& label,
                                                        const std::vector<std::string>& names) {
  Parser p{label, names, 0, num_inputs, std::vector<RecordedInput>(num_inputs), {}};
  while (!source.empty()) {
    ++p.line_number;
    auto nl = source.find('\n');
    p.line(source.substr(0, nl));
    if (nl == std::string_view::npos) break;
    source.remove_prefix(nl + 1);
  }
  p.from_checks();
  return std::move(p.specs);
}

}  // namespace externspec::detail
