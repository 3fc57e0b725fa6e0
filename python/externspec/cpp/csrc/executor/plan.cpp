// A node's call plan: cpp/csrc/executor/plan.h.
#include "executor/plan.h"

#include "executor/layout.h"
#include "executor/op_policy.h"
#include "executor/ops.h"

namespace externspec {

// The steps of abi/plan.py's `plan_node`, by the same names: the op looked up (ops.cpp), the op
// policy's verdict (op_policy.cpp), the export-time schema, the given inputs, the guards, then the
// layout (layout.cpp).
NodePlan plan_node(std::size_t index, const ExternKernelNode& ekn, const CustomObjects& objects,
                   CallLayout call_layout, const std::vector<std::string>& allow_ops,
                   const std::optional<c10::Device>& device) {
  const Node& node = ekn.node;
  const std::string label = node_label(index, ekn.name, node.target);
  const bool torchbind = node.target == "call_torchbind";
  const std::string* custom_op = metadata(node, METADATA_TORCH_CUSTOM_OP);
  NodePlan plan = torchbind ? NodePlan(resolve_torchbind_method(label, node))
                            : NodePlan(resolve_op(label, node.target, custom_op && *custom_op == "1"));
  plan.label = label;
  const c10::FunctionSchema& schema = plan.schema();
  const std::string qualified =
      schema.name() + "." + (schema.overload_name().empty() ? std::string("default") : schema.overload_name());
  // The op policy names dispatcher ops; a method belongs to a class some library registered.
  if (!torchbind) check_policy(label, qualified, allow_ops);
  const std::optional<c10::FunctionSchema> exported = export_schema(label, node);
  const std::vector<const Argument*> inputs = given_inputs(label, node, schema, exported, torchbind);
  if (!torchbind) check_guards(label, qualified, schema.arguments(), inputs);
  if (!torchbind) plan.checks = plan_checks(label, qualified, schema);
  lay_out(label, node, schema, exported, inputs, call_layout, plan, objects, device);
  return plan;
}

}  // namespace externspec
