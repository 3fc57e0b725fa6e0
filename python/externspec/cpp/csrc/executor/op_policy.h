// The op policy (include/externspec/torch/op_policy.def, which python/externspec/abi/op_policy.py
// reads too): which ops a spec may call, guards against static arguments that crash a kernel, and
// the bound on node metadata that names an op schema.
#pragma once

#include <ATen/core/function_schema.h>

#include <string>
#include <string_view>
#include <vector>

#include <externspec/externspec.h>
#include <externspec/torch/proxy_executor.h>

namespace externspec {

// Is `s` an allow_ops entry (`ns::*`, `ns::name`, `ns::name.overload`)?
bool is_allow_pattern(std::string_view s);

// SpecMismatchError unless op `qualified` (`ns::name.overload`) is allowed.
void check_policy(const std::string& label, const std::string& qualified, const std::vector<std::string>& allow_ops);

// Bound `externspec.op_schema` before torch's recursive schema parser sees it.
void check_op_schema_text(const std::string& label, std::string_view key, const std::string& text);

// Refuse static arguments the op policy knows crash the kernel (`given[i]`: argument i, null if
// omitted).
void check_guards(const std::string& label, const std::string& qualified, const std::vector<c10::Argument>& params,
                  const std::vector<const Argument*>& given);

// The op policy's checks of op `qualified`'s ints (ES_CHECK), located on its stack.
std::vector<ArgCheck> plan_checks(const std::string& label, const std::string& qualified,
                                  const c10::FunctionSchema& schema);

// CallError (naming node `index`, the op and the argument) unless the call's `stack` meets `plan`'s
// checks.
void check_call(const NodePlan& plan, std::size_t index, const std::vector<c10::IValue>& stack);

}  // namespace externspec
