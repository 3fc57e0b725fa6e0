// Node layout and planning: a node checked against its op's runtime schema and placed in the two
// flat arrays, static values decoded (the C++ twin of python/externspec/abi/layout.py, by the same
// rules: tests/abi/test_node_layout.py checks that both consume the same counts).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <externspec/externspec.h>
#include <externspec/torch/proxy_executor.h>

namespace externspec {

// The plan of node `index`; `defaults_passed`: laid out OMITTED_DEFAULTS_PASSED (an omitted kwarg-only
// argument as its default written out). Throws SpecMismatchError (and UnsupportedError's kin) about the node.
NodePlan plan_node(std::size_t index, const ExternKernelNode& ekn, const CustomObjects& objects,
                   bool defaults_passed, const std::vector<std::string>& allow_ops,
                   const std::optional<c10::Device>& device);

}  // namespace externspec
