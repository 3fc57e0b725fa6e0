// The lengths each extern call of a wrapper source states: aoti_package/wrapper_calls.h.
#include "aoti_package/wrapper_calls.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

namespace externspec::detail {
namespace {

constexpr std::string_view kCall = "aoti_torch_proxy_executor_call_function(";

// A cursor over one statement; each read advances past what it matched, or fails.
struct Cursor {
  std::string_view s;
  std::size_t at = 0;

  static bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
  void skip_space() {
    while (at < s.size() && space(s[at])) ++at;
  }
  bool literal(std::string_view word) {
    if (s.substr(at, word.size()) != word) return false;
    at += word.size();
    return true;
  }
  // Python's `\d+` (saturating: a number past int64 is no node and no length of this spec).
  std::optional<std::int64_t> number() {
    std::size_t start = at;
    std::int64_t v = 0;
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
      std::int64_t d = s[at++] - '0';
      v = v > (kMax - d) / 10 ? kMax : v * 10 + d;
    }
    if (at == start) return std::nullopt;
    return v;
  }
  // `std::array<TYPE,\s*\d+>{...}.data()`, the braces holding no `}`.
  bool array(std::string_view type) {
    if (!literal("std::array<") || !literal(type) || !literal(",")) return false;
    skip_space();
    if (!number() || !literal(">{")) return false;
    std::size_t close = s.find('}', at);
    if (close == std::string_view::npos) return false;
    at = close + 1;
    return literal(".data()");
  }
  // `,\s*` between arguments (the regex's `,\s*`).
  bool comma() {
    if (!literal(",")) return false;
    skip_space();
    return true;
  }
};

// `statement` starts after the call's name; matches `\s*proxy_executor,\s*(\d+),\s*(\d+),\s*ARRAY,\s*(\d+),\s*ARRAY\s*\)`.
std::optional<CallLengths> parse(std::string_view statement) {
  Cursor c{statement};
  c.skip_space();
  if (!c.literal("proxy_executor") || !c.comma()) return std::nullopt;
  auto index = c.number();
  if (!index || !c.comma()) return std::nullopt;
  auto num_ints = c.number();
  if (!num_ints || !c.comma() || !c.array("int64_t") || !c.comma()) return std::nullopt;
  auto num_tensors = c.number();
  if (!num_tensors || !c.comma() || !c.array("AtenTensorHandle")) return std::nullopt;
  c.skip_space();
  if (!c.literal(")")) return std::nullopt;
  return CallLengths{*index, *num_ints, *num_tensors};
}

}  // namespace

std::vector<CallLengths> wrapper_call_lengths(std::string_view source) {
  std::vector<CallLengths> out;
  std::size_t start = source.find(kCall);
  while (start != std::string_view::npos) {
    std::size_t end = source.find(';', start);
    if (end == std::string_view::npos) end = source.size();
    if (auto call = parse(source.substr(start + kCall.size(), end - start - kCall.size()))) out.push_back(*call);
    start = source.find(kCall, std::max(end, start + 1));
  }
  return out;
}

}  // namespace externspec::detail
