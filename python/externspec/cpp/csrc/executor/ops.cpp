#include "executor/ops.h"

#include <ATen/core/class_type.h>
#include <torch/custom_class_detail.h>

#include <externspec/torch/errors.h>
#include <externspec/messages.h>

namespace externspec {
namespace {

// Has any op of namespace `ns` been registered in this process? (Asked on the error path only.)
bool namespace_registered(std::string_view ns) {
  for (const auto& name : c10::Dispatcher::singleton().getAllOpNames()) {
    std::string_view n = name.name;
    if (n.size() > ns.size() + 1 && n.substr(0, ns.size()) == ns && n.substr(ns.size(), 2) == "::") return true;
  }
  return false;
}

}  // namespace

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

// A target's parts by abi.split_target's grammar (python/externspec/abi/__init__.py): `ns::op`,
// `ns::op.overload` or `torch.ops.ns.op.overload`, each part an identifier and not a dunder.
// tests/abi/test_op_lookup.py runs this parser and the Python one over the same targets.
bool split_target(std::string_view target, std::string_view& ns, std::string_view& name,
                  std::string_view& overload) {
  constexpr std::string_view kTorchOps = "torch.ops.";
  constexpr auto npos = std::string_view::npos;
  if (target.substr(0, kTorchOps.size()) == kTorchOps) {
    auto rest = target.substr(kTorchOps.size());
    auto first = rest.find('.');
    auto second = first == npos ? npos : rest.find('.', first + 1);
    if (second == npos || rest.find('.', second + 1) != npos) return false;
    ns = rest.substr(0, first);
    name = rest.substr(first + 1, second - first - 1);
    overload = rest.substr(second + 1);
  } else {
    auto sep = target.find("::");
    if (sep == npos) return false;
    ns = target.substr(0, sep);
    auto rest = target.substr(sep + 2);
    auto dot = rest.find('.');
    name = rest.substr(0, dot);
    overload = dot == npos ? std::string_view("default") : rest.substr(dot + 1);
  }
  auto part = [](std::string_view s) { return is_identifier(s) && s.substr(0, 2) != "__"; };
  return part(ns) && part(name) && part(overload);
}

// A target -> its OperatorHandle. Only a registry lookup: the parts must be identifiers, and
// nothing is loaded or evaluated. Throws SpecMismatchError (with `why`).
c10::OperatorHandle resolve_op(const std::string& label, const std::string& target, bool custom_op) {
  std::string_view ns, name, overload;
  if (!split_target(target, ns, name, overload))
    throw SpecMismatchError(label + ": " + message(Message::NOT_AN_OP_TARGET, {{"target", target}}));
  c10::OperatorName op_name(std::string(ns) + "::" + std::string(name),
                            overload == "default" ? std::string() : std::string(overload));
  auto handle = c10::Dispatcher::singleton().findSchema(op_name);
  if (!handle) {
    std::string hint = custom_op ? message(Message::CUSTOM_OP_HINT) : "";
    if (!namespace_registered(ns)) {
      std::string advice = message(Message::LOAD_NAMESPACE_LIBRARY, {{"namespace", ns}});
      SpecMismatchError error(label + ": " +
                              message(Message::OP_NAMESPACE_NOT_REGISTERED,
                                      {{"target", target}, {"namespace", ns}, {"advice", advice}}) +
                              hint);
      error.missing_namespace = std::string(ns);
      throw error;
    }
    throw SpecMismatchError(label + ": " + message(Message::OP_NOT_REGISTERED, {{"target", target}}) + hint);
  }
  return *handle;
}

// `call_torchbind`'s callee: input 0 is the object (`as_custom_obj`, naming its class), input 1 the
// method's name. Only registry lookups, as for ops: the class among the registered torchbind
// classes, the method among its methods. The other inputs bind to the method's schema by name, as
// an op's do (torch names them after it: `_0` is the object). Throws SpecMismatchError.
torch::jit::Function* resolve_torchbind_method(const std::string& label, const Node& node) {
  const auto& in = node.inputs;
  if (in.size() < 2 || !in[0].arg.is_as_custom_obj() || !in[1].arg.is_as_string())
    throw SpecMismatchError(label + ": a torchbind method call takes its object (as_custom_obj) and the method's "
                            "name (as_string) as its first two inputs");
  const std::string& fqn = in[0].arg.as_custom_obj().class_fqn;
  const std::string& method = in[1].arg.as_string();
  c10::ClassTypePtr cls = torch::getCustomClass(fqn);
  if (!cls)
    throw SpecMismatchError(label + ": no torchbind class `" + fqn + "` is registered (load the library that "
                            "defines it first: AOTIRunnerOptions::op_libraries, or torch.ops.load_library)");
  // A dunder (`__init__`, `__setstate__`, ...) re-initialises the caller's object: never a call a
  // model makes (op targets refuse dunders too).
  if (method.substr(0, 2) == "__")
    throw SpecMismatchError(label + ": torchbind method `" + method + "` of `" + fqn +
                            "` is a dunder method: a spec may call the object's own methods only");
  torch::jit::Function* fn = cls->findMethod(method);
  if (fn == nullptr) throw SpecMismatchError(label + ": torchbind class `" + fqn + "` has no method `" + method + "`");
  return fn;
}

}  // namespace externspec
