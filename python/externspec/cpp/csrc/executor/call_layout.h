// Which call layout a spec's calls use (docs/torch-compat.md, "The call layout"): the C++ twin of
// python/externspec/abi/call_layout.py, by the same rules and words (tests/abi/test_call_layout.py
// runs one body over both).
//
// A torch-written node whose omitted kwarg-only defaults take int slots has two candidate plans,
// NODE_ARGUMENTS (torch 2.15's wrappers) and OMITTED_DEFAULTS_PASSED (2.11 to 2.14's), which differ
// exactly by those slots, so a call's own `num_ints` matches at most one. A package has one layout:
// the first call (or, at load, the first call of the package's wrapper) that matches one candidate
// decides it for every node, and a later call matching only the other is refused naming both.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <externspec/torch/proxy_executor.h>

namespace externspec {

// The layout a spec is planned by: the one it states (`call_layout`, schema 1.2); NODE_ARGUMENTS for
// a versioned file that states none (1.0, 1.1); for a torch-written file, the option (unset: "auto").
// An option other than the file's layout is a SpecMismatchError naming both.
std::optional<CallLayout> planned_layout(bool versioned, std::optional<CallLayout> stated,
                                         std::optional<CallLayout> option);

class LayoutChoice {
 public:
  explicit LayoutChoice(std::optional<CallLayout> layout);

  // Node `index` has two candidate plans (NODE_ARGUMENTS, OMITTED_DEFAULTS_PASSED).
  void add(std::size_t index, NodePlan node_arguments, NodePlan defaults_passed);
  // Each call of the package's wrapper checked against its node's plans, the first decisive one
  // locking the layout. SpecMismatchError naming the node when a call matches no plan.
  void decide_at_load(const std::vector<NodePlan>& plans, const std::vector<CallLengths>& calls);
  // At load: each node with candidates gets the decided one's plan, or (undecided) its NODE_ARGUMENTS
  // candidate marked `layout_undecided`, so its calls reach `resolve`.
  void apply(std::vector<NodePlan>& plans) const;
  // The plan of a call of node `index` whose lengths are not its plan's: null when the node has one
  // layout, else the candidate the lengths match (the first such call locks the spec's layout;
  // thread-safe). CallError naming both candidates otherwise.
  const NodePlan* resolve(std::size_t index, std::int64_t num_ints, std::int64_t num_tensors) const;

  std::optional<CallLayout> layout() const;

 private:
  struct Candidates {
    NodePlan node_arguments, defaults_passed;
    const NodePlan& operator[](CallLayout l) const {
      return l == CallLayout::NODE_ARGUMENTS ? node_arguments : defaults_passed;
    }
  };
  enum class By : std::int64_t { Option = 0, Wrapper = 1, FirstCall = 2 };
  static std::optional<CallLayout> matching(const Candidates& c, std::int64_t num_ints, std::int64_t num_tensors);
  bool decide(CallLayout layout, By by, std::size_t index) const;
  std::string refusal(const Candidates& c, const std::string& passes, std::optional<CallLayout> matched) const;

  // 0: undecided; else the layout, how it was decided and (by a call) the node: layout | by << 2 | node << 4.
  mutable std::atomic<std::int64_t> state_;
  std::unordered_map<std::size_t, Candidates> candidates_;
};

}  // namespace externspec
