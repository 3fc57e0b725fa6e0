// Node layout: a node checked against its op's runtime schema and placed in the two flat arrays,
// static values decoded (the C++ twin of python/externspec/abi/layout.py, by the same rules and
// function names: tests/abi/test_node_layout.py checks that both consume the same counts). A node's
// call plan is built from these steps in plan.cpp.
#pragma once

#include <ATen/core/function_schema.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <externspec/externspec.h>
#include <externspec/torch/proxy_executor.h>

namespace externspec {

// How errors name node `index`: "node 3 `buf3` (aten::add.Tensor)".
std::string node_label(std::size_t index, const std::string& name, const std::string& target);

// The value of the node's metadata `key` (null when the node has none).
const std::string* metadata(const Node& node, std::string_view key);

// The schema the node records it was exported against (`externspec.op_schema`), if any.
// SpecMismatchError naming `label` when it is not one.
std::optional<c10::FunctionSchema> export_schema(const std::string& label, const Node& node);

// The node's inputs by schema position (null: not given), each checked to be in the runtime schema,
// once, in schema order. A torchbind call's input 1 is the method's name, not an argument.
std::vector<const Argument*> given_inputs(const std::string& label, const Node& node, const c10::FunctionSchema& schema,
                                          const std::optional<c10::FunctionSchema>& exported, bool torchbind);

// Every argument placed (a static value in the plan's stack, or a fill reading the arrays), then
// the returns, under `call_layout` (OMITTED_DEFAULTS_PASSED: an omitted kwarg-only argument as its
// default written out). `inputs` is what `given_inputs` returns.
void lay_out(const std::string& label, const Node& node, const c10::FunctionSchema& schema,
             const std::optional<c10::FunctionSchema>& exported, const std::vector<const Argument*>& inputs,
             CallLayout call_layout, NodePlan& plan, const CustomObjects& objects,
             const std::optional<c10::Device>& device);

}  // namespace externspec
