#include "executor/op_policy.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <iterator>

#include <externspec/torch/errors.h>
#include <externspec/messages.h>

#include "executor/ops.h"

namespace externspec {
namespace {

// The op policy (include/externspec/torch/op_policy.def, which externspec/abi/op_policy.py reads too).
struct Denied {
  std::string_view pattern, reason;
};
struct Guard {
  std::string_view op, arg, value, arg2, value2, reason;
};
struct Check {
  std::string_view op, arg, rule, tensor, reason;
};
#define ES_REVIEWED(pattern, reason)
#define ES_LIMIT(name, value) constexpr std::size_t limit_##name = value;
#define ES_DENY(pattern, reason)
#define ES_GUARD(op, arg, value, arg2, value2, reason)
#include <externspec/torch/op_policy.def>
#undef ES_LIMIT
#define ES_LIMIT(name, value)
#undef ES_DENY
#define ES_DENY(pattern, reason) Denied{pattern, reason},
constexpr Denied kDenied[] = {
#include <externspec/torch/op_policy.def>
};
#undef ES_DENY
#define ES_DENY(pattern, reason)
#undef ES_GUARD
#define ES_GUARD(op, arg, value, arg2, value2, reason) Guard{op, arg, value, arg2, value2, reason},
constexpr Guard kGuards[] = {
#include <externspec/torch/op_policy.def>
};
#undef ES_GUARD
#define ES_GUARD(op, arg, value, arg2, value2, reason)
#define ES_CHECK(op, arg, rule, tensor, reason) Check{op, arg, rule, tensor, reason},
constexpr Check kChecks[] = {
#include <externspec/torch/op_policy.def>
};
#undef ES_GUARD
#undef ES_DENY
#undef ES_LIMIT
#undef ES_REVIEWED

// Does a deny/allow pattern (`ns::*`, `ns::name`, `ns::name.overload`) cover `ns::name.overload`?
bool matches(std::string_view pattern, std::string_view qualified) {
  auto sep = qualified.find("::");
  auto dot = qualified.find('.', sep);
  if (pattern.size() == sep + 3 && pattern.substr(0, sep + 2) == qualified.substr(0, sep + 2) &&
      pattern.substr(sep + 2) == "*")
    return true;
  if (pattern.find('.') != std::string_view::npos) return pattern == qualified;
  return pattern == qualified.substr(0, dot);
}


// An omitted argument counts as its default. `value` is None, False or True.
bool static_is(const c10::Argument& p, const Argument* arg, std::string_view value) {
  if (arg == nullptr) {
    const auto& d = p.default_value();
    if (!d) return false;
    if (value == "None") return d->isNone();
    return d->isBool() && d->toBool() == (value == "True");
  }
  if (value == "None") return arg->is_as_none();
  return arg->is_as_bool() && arg->as_bool() == (value == "True");
}

// A bound of an ES_CHECK range: an integer, or `rank`.
std::int64_t bound(std::string_view text, std::int64_t rank) {
  if (text == "rank") return rank;
  std::int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// What is wrong with `values` under `c` (`rank`: its tensor's), or "" (op_policy.py's Check.problem,
// in the same words).
std::string problem(const Check& c, const std::vector<std::int64_t>& values, std::int64_t rank) {
  const std::string tensor(c.tensor);
  if (c.rule == "dims") {
    std::vector<bool> seen(static_cast<std::size_t>(rank), false);
    for (const std::int64_t d : values) {
      if (d < 0 || d >= rank)
        return message(Message::NOT_A_DIM,
                       {{"dim", std::to_string(d)}, {"tensor", tensor}, {"last", std::to_string(rank - 1)}});
      if (seen[static_cast<std::size_t>(d)]) return message(Message::DIM_GIVEN_TWICE, {{"dim", std::to_string(d)}});
      seen[static_cast<std::size_t>(d)] = true;
    }
    return "";
  }
  const auto dots = c.rule.find("..");
  const std::int64_t lo = bound(c.rule.substr(0, dots), rank), hi = bound(c.rule.substr(dots + 2), rank);
  for (std::int64_t v : values)
    if (v < lo || v > hi)
      return std::to_string(v) + " is not in " + std::to_string(lo) + ".." + std::to_string(hi) +
             (c.rule.find("rank") != std::string_view::npos
                  ? " (`" + tensor + "` has " + std::to_string(rank) + " dims)"
                  : std::string());
  return "";
}

// The ints of an int / int[] / SymInt / SymInt[] value on the stack.
std::vector<std::int64_t> ints_of(const c10::IValue& v) {
  if (v.isInt()) return {v.toInt()};
  if (v.isSymInt()) return {v.toSymInt().guard_int(__FILE__, __LINE__)};
  if (v.isIntList()) return v.toIntVector();
  std::vector<std::int64_t> out;
  if (v.isList())
    for (const c10::IValue& e : v.toListRef()) out.push_back(e.isSymInt() ? e.toSymInt().guard_int(__FILE__, __LINE__)
                                                                          : e.toInt());
  return out;
}

// The value as Python prints it: `5`, `[1, -1]`.
std::string shown(const c10::IValue& v, const std::vector<std::int64_t>& values) {
  if (!v.isList() && !v.isIntList()) return std::to_string(values.at(0));
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

}  // namespace

std::vector<ArgCheck> plan_checks(const std::string& label, const std::string& qualified,
                                  const c10::FunctionSchema& schema) {
  std::vector<ArgCheck> out;
  for (std::size_t e = 0; e < std::size(kChecks); ++e) {
    const Check& c = kChecks[e];
    if (!matches(c.op, qualified)) continue;
    ArgCheck placed{0, 0, e};
    for (std::string_view name : {c.arg, c.tensor}) {
      if (name.empty()) continue;
      auto at = schema.argumentIndexWithName(std::string(name));
      if (!at)
        throw SpecMismatchError(message(Message::POLICY_CHECKS_MISSING_ARGUMENT, {{"label", label}, {"name", name}}));
      (name == c.arg ? placed.arg : placed.tensor) = static_cast<std::uint32_t>(*at);
    }
    out.push_back(placed);
  }
  return out;
}

void check_call(const NodePlan& plan, std::size_t index, const std::vector<c10::IValue>& stack) {
  for (const ArgCheck& a : plan.checks) {
    const Check& c = kChecks[a.entry];
    const c10::IValue& v = stack[a.arg];
    if (v.isNone()) continue;
    const std::vector<std::int64_t> values = ints_of(v);
    const c10::IValue& t = stack[a.tensor];
    const std::int64_t rank = !c.tensor.empty() && t.isTensor() ? t.toTensor().dim() : 0;
    const std::string why = problem(c, values, rank);
    if (why.empty()) continue;
    CallError e(message(Message::POLICY_CHECK_REFUSED, {{"label", plan.label},
                                                        {"arg", c.arg},
                                                        {"value", shown(v, values)},
                                                        {"problem", why},
                                                        {"reason", c.reason}}));
    e.node = index;
    throw e;
  }
}

bool is_allow_pattern(std::string_view s) {
  auto sep = s.find("::");
  if (sep == std::string_view::npos || !is_identifier(s.substr(0, sep))) return false;
  auto rest = s.substr(sep + 2);
  if (rest == "*") return true;
  auto dot = rest.find('.');
  if (dot == std::string_view::npos) return is_identifier(rest);
  return is_identifier(rest.substr(0, dot)) && is_identifier(rest.substr(dot + 1));
}

void check_policy(const std::string& label, const std::string& qualified, const std::vector<std::string>& allow_ops) {
  for (const auto& d : kDenied) {
    if (!matches(d.pattern, qualified)) continue;
    bool allowed = false;
    for (const auto& a : allow_ops) allowed = allowed || matches(a, qualified);
    if (!allowed)
      throw SpecMismatchError(message(Message::OP_DENIED, {{"label", label},
                                                           {"op", qualified},
                                                           {"reason", d.reason},
                                                           {"allow", qualified.substr(0, qualified.find('.'))}}));
  }
}

// Bound `externspec.op_schema` before torch's recursive schema parser sees it.
void check_op_schema_text(const std::string& label, std::string_view key, const std::string& text) {
  if (text.size() > limit_op_schema_max_bytes)
    throw SpecMismatchError(message(Message::METADATA_TOO_LONG, {{"label", label},
                                                                 {"key", key},
                                                                 {"size", std::to_string(text.size())},
                                                                 {"limit", std::to_string(limit_op_schema_max_bytes)}}));
  std::size_t depth = 0, deepest = 0;
  for (char c : text) {
    if (c == '(' || c == '[') deepest = std::max(deepest, ++depth);
    else if ((c == ')' || c == ']') && depth > 0) --depth;
  }
  if (deepest > limit_op_schema_max_depth)
    throw SpecMismatchError(message(Message::METADATA_TOO_DEEP, {{"label", label},
                                                                 {"key", key},
                                                                 {"depth", std::to_string(deepest)},
                                                                 {"limit", std::to_string(limit_op_schema_max_depth)}}));
}

// Refuse static arguments the op policy knows crash the kernel.
void check_guards(const std::string& label, const std::string& qualified, const std::vector<c10::Argument>& params,
                  const std::vector<const Argument*>& given) {
  auto holds = [&](std::string_view name, std::string_view value) {
    for (std::size_t i = 0; i < params.size(); ++i)
      if (params[i].name() == name) return static_is(params[i], given[i], value);
    return false;
  };
  for (const auto& g : kGuards) {
    if (!matches(g.op, qualified)) continue;
    if (!holds(g.arg, g.value) || (!g.arg2.empty() && !holds(g.arg2, g.value2))) continue;
    std::string said = "`" + std::string(g.arg) + "` is " + std::string(g.value);
    if (!g.arg2.empty()) said += " and `" + std::string(g.arg2) + "` is " + std::string(g.value2);
    throw SpecMismatchError(
        message(Message::POLICY_GUARD_REFUSED, {{"label", label}, {"said", said}, {"reason", g.reason}}));
  }
}

}  // namespace externspec
