// A node's call plan, computed once at load (the C++ twin of python/externspec/abi/plan.py, by the
// same function names): the op looked up (ops.cpp), the op policy's verdict and checks
// (op_policy.cpp), then the layout (layout.cpp).
#pragma once

#include <c10/core/Device.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <externspec/externspec.h>
#include <externspec/torch/proxy_executor.h>

namespace externspec {

// The plan of node `index`, laid out by `call_layout`. Throws SpecMismatchError (and
// UnsupportedError's kin) about the node.
NodePlan plan_node(std::size_t index, const ExternKernelNode& ekn, const CustomObjects& objects,
                   CallLayout call_layout, const std::vector<std::string>& allow_ops,
                   const std::optional<c10::Device>& device);

}  // namespace externspec
