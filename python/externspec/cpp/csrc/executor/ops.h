// Op lookup: a node's target -> the dispatcher op, a `call_torchbind` node -> the torchbind
// method (the C++ twin of python/externspec/abi/ops.py). Registry lookups only: nothing named by a
// spec is loaded or evaluated.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/function.h>

#include <string>
#include <string_view>

#include <externspec/externspec.h>

namespace externspec {

// An identifier: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(std::string_view s);

// A target's parts by abi.split_target's grammar; false for a target of no op's form.
bool split_target(std::string_view target, std::string_view& ns, std::string_view& name,
                  std::string_view& overload);

// A target -> its OperatorHandle. Throws SpecMismatchError naming `label`.
c10::OperatorHandle resolve_op(const std::string& label, const std::string& target, bool custom_op);

// A `call_torchbind` node -> the method it calls. Throws SpecMismatchError naming `label`.
torch::jit::Function* resolve_torchbind_method(const std::string& label, const Node& node);

}  // namespace externspec
