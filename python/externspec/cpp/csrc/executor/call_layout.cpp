// Which call layout a spec's calls use: cpp/csrc/executor/call_layout.h.
#include "executor/call_layout.h"

#include <utility>

#include <externspec/torch/errors.h>
#include <externspec/messages.h>

namespace externspec {
namespace {

// The schema's name of a layout (the generated name table, as the Python enum's `.name`).
std::string name_of(CallLayout l) { return std::string(to_string(l)); }

std::string lengths(const NodePlan& p) {
  return message(Message::CALL_LENGTHS_PAIR,
                 {{"num_tensors", std::to_string(p.num_tensors)}, {"num_ints", std::to_string(p.num_ints)}});
}

}  // namespace

std::optional<CallLayout> planned_layout(bool versioned, std::optional<CallLayout> stated,
                                         std::optional<CallLayout> option) {
  if (!stated && !versioned) return option;
  const CallLayout layout = stated.value_or(CallLayout::NODE_ARGUMENTS);
  if (option && *option != layout)
    throw SpecMismatchError(message(
        Message::CALL_LAYOUT_OPTION_CONFLICT,
        {{"option", name_of(*option)},
         {"layout", name_of(layout)},
         {"why", stated ? message(Message::CALL_LAYOUT_STATED, {{"layout", name_of(layout)}})
                        : message(Message::CALL_LAYOUT_VERSIONED)}}));
  return layout;
}

LayoutChoice::LayoutChoice(std::optional<CallLayout> layout)
    : state_(layout ? static_cast<std::int64_t>(*layout) : 0) {}

void LayoutChoice::add(std::size_t index, NodePlan node_arguments, NodePlan defaults_passed) {
  candidates_.emplace(index, Candidates{std::move(node_arguments), std::move(defaults_passed)});
}

std::optional<CallLayout> LayoutChoice::layout() const {
  std::int64_t s = state_.load(std::memory_order_acquire);
  if (s == 0) return std::nullopt;
  return static_cast<CallLayout>(s & 3);
}

std::optional<CallLayout> LayoutChoice::matching(const Candidates& c, std::int64_t num_ints, std::int64_t num_tensors) {
  for (CallLayout l : {CallLayout::NODE_ARGUMENTS, CallLayout::OMITTED_DEFAULTS_PASSED})
    if (c[l].num_ints == num_ints && c[l].num_tensors == num_tensors) return l;
  return std::nullopt;
}

bool LayoutChoice::decide(CallLayout layout, By by, std::size_t index) const {
  std::int64_t want = static_cast<std::int64_t>(layout) | static_cast<std::int64_t>(by) << 2 |
                      static_cast<std::int64_t>(index) << 4;
  std::int64_t seen = 0;
  if (state_.compare_exchange_strong(seen, want, std::memory_order_acq_rel)) return true;
  return (seen & 3) == static_cast<std::int64_t>(layout);
}

std::string LayoutChoice::refusal(const Candidates& c, const std::string& passes,
                                  std::optional<CallLayout> matched) const {
  const std::string& label = c.node_arguments.label;
  if (!matched)
    return message(Message::CALL_MATCHES_NO_LAYOUT, {{"label", label},
                                                     {"passes", passes},
                                                     {"node_arguments", lengths(c.node_arguments)},
                                                     {"defaults_passed", lengths(c.defaults_passed)}});
  std::int64_t s = state_.load(std::memory_order_acquire);
  auto locked = static_cast<CallLayout>(s & 3);
  auto by = static_cast<By>((s >> 2) & 3);
  std::string node = std::to_string(s >> 4);
  std::string decided_by = by == By::Option    ? message(Message::DECIDED_BY_OPTION)
                           : by == By::Wrapper ? message(Message::DECIDED_BY_WRAPPER, {{"index", node}})
                                               : message(Message::DECIDED_BY_FIRST_CALL, {{"index", node}});
  return message(Message::CALL_OTHER_LAYOUT, {{"label", label},
                                              {"passes", passes},
                                              {"matched", name_of(*matched)},
                                              {"layout", name_of(locked)},
                                              {"decided_by", decided_by},
                                              {"lengths", lengths(c[locked])}});
}

void LayoutChoice::decide_at_load(const std::vector<NodePlan>& plans, const std::vector<CallLengths>& calls) {
  for (const CallLengths& call : calls) {
    if (call.index < 0 || static_cast<std::size_t>(call.index) >= plans.size())
      throw SpecMismatchError(message(Message::WRAPPER_CALLS_NO_NODE, {{"index", std::to_string(call.index)},
                                                                       {"count", std::to_string(plans.size())}}));
    auto index = static_cast<std::size_t>(call.index);
    std::string passes = message(Message::WRAPPER_CALL_PASSES, {{"num_tensors", std::to_string(call.num_tensors)},
                                                                {"num_ints", std::to_string(call.num_ints)}});
    auto it = candidates_.find(index);
    if (it == candidates_.end()) {
      const NodePlan& plan = plans[index];
      if (plan.num_ints != call.num_ints || plan.num_tensors != call.num_tensors) {
        SpecMismatchError e(
            message(Message::CALL_PLAN_TAKES, {{"label", plan.label}, {"passes", passes}, {"lengths", lengths(plan)}}));
        e.node = index;
        throw e;
      }
      continue;
    }
    auto matched = matching(it->second, call.num_ints, call.num_tensors);
    if (!matched || !decide(*matched, By::Wrapper, index)) {
      SpecMismatchError e(refusal(it->second, passes, matched));
      e.node = index;
      throw e;
    }
  }
}

void LayoutChoice::apply(std::vector<NodePlan>& plans) const {
  auto decided = layout();
  for (const auto& [index, c] : candidates_) {
    plans[index] = decided ? c[*decided] : c.node_arguments;
    plans[index].layout_undecided = !decided;
  }
}

const NodePlan* LayoutChoice::resolve(std::size_t index, std::int64_t num_ints, std::int64_t num_tensors) const {
  auto it = candidates_.find(index);
  if (it == candidates_.end()) return nullptr;
  auto matched = matching(it->second, num_ints, num_tensors);
  if (!matched || !decide(*matched, By::FirstCall, index)) {
    CallError e(refusal(it->second,
                        message(Message::CALL_GOT,
                                {{"num_tensors", std::to_string(num_tensors)}, {"num_ints", std::to_string(num_ints)}}),
                        matched));
    e.node = index;
    throw e;
  }
  return &it->second[*matched];
}

}  // namespace externspec
