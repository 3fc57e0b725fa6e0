#include <externspec/torch/proxy_executor.h>

#include <ATen/core/Tensor.h>
#include <ATen/ops/scalar_tensor.h>
#include <c10/util/Exception.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>
#include <ATen/core/class_type.h>
#include <torch/custom_class_detail.h>

#include <optional>
#include <sstream>
#include <stdexcept>
#include <unordered_set>
#include <utility>

#include "executor/abi.h"
#include "executor/enums.h"
#include <externspec/torch/errors.h>

namespace externspec {
namespace {

thread_local std::exception_ptr last_error;

// The op policy (include/externspec/torch/op_policy.def, which externspec/abi/op_policy.py reads too).
struct Denied {
  std::string_view pattern, reason;
};
struct Guard {
  std::string_view op, arg, value, arg2, value2, reason;
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

template <class T>
std::string str_of(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

// Has any op of namespace `ns` been registered in this process? (Asked on the error path only.)
bool namespace_registered(std::string_view ns) {
  for (const auto& name : c10::Dispatcher::singleton().getAllOpNames()) {
    std::string_view n = name.name;
    if (n.size() > ns.size() + 1 && n.substr(0, ns.size()) == ns && n.substr(ns.size(), 2) == "::") return true;
  }
  return false;
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
    throw SpecMismatchError(label + ": `" + target + "` is not of the form ns::op or ns::op.overload");
  c10::OperatorName op_name(std::string(ns) + "::" + std::string(name),
                            overload == "default" ? std::string() : std::string(overload));
  auto handle = c10::Dispatcher::singleton().findSchema(op_name);
  if (!handle) {
    std::string hint = custom_op ? " (a torch.library.custom_op: define it in Python before loading)" : "";
    if (!namespace_registered(ns))
      throw SpecMismatchError(label + ": no op `" + target + "` is registered, nor any op of namespace `" +
                              std::string(ns) + "`: load the library that defines namespace `" + std::string(ns) +
                              "` first (AOTIRunnerOptions::op_libraries, op_libraries=[...] in Python, or "
                              "torch.ops.load_library)" + hint);
    throw SpecMismatchError(label + ": no op `" + target +
                            "` is registered (load the library that defines it first)" + hint);
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
      throw SpecMismatchError(label + ": op `" + qualified + "` is denied by the executor's op policy: it " +
                              std::string(d.reason) + " (pass allow_ops=[\"" + qualified.substr(0, qualified.find('.')) +
                              "\"] to allow it)");
  }
}

// Bound `externspec.op_schema` before torch's recursive schema parser sees it.
void check_op_schema_text(const std::string& label, std::string_view key, const std::string& text) {
  if (text.size() > limit_op_schema_max_bytes)
    throw SpecMismatchError(label + ": metadata `" + std::string(key) + "` is " + std::to_string(text.size()) +
                            " bytes long (the limit is " + std::to_string(limit_op_schema_max_bytes) +
                            "); it is not an op schema");
  std::size_t depth = 0, deepest = 0;
  for (char c : text) {
    if (c == '(' || c == '[') deepest = std::max(deepest, ++depth);
    else if ((c == ')' || c == ']') && depth > 0) --depth;
  }
  if (deepest > limit_op_schema_max_depth)
    throw SpecMismatchError(label + ": metadata `" + std::string(key) + "` nests " + std::to_string(deepest) +
                            " levels deep (the limit is " + std::to_string(limit_op_schema_max_depth) +
                            "); it is not an op schema");
}

const std::string* metadata(const Node& node, std::string_view key) {
  auto it = node.metadata.find(key);
  return it == node.metadata.end() ? nullptr : &it->second;
}

std::string join(const std::vector<std::string_view>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string return_types(const std::vector<c10::Argument>& returns) {
  std::string out;
  for (std::size_t i = 0; i < returns.size(); ++i) {
    if (i) out += ", ";
    out += arg_type(returns[i].real_type()).str();
  }
  return out.empty() ? "()" : out;
}

c10::IValue number_list(const std::vector<c10::IValue>& items) {
  c10::impl::GenericList list(c10::NumberType::get());
  list.reserve(items.size());
  for (const auto& i : items) list.push_back(i);
  return list;
}

// A static argument's IValue, shaped by the schema type (a `Scalar[]` is a generic list of
// numbers, a `float[]` a double list). Throws UnsupportedError.
c10::IValue static_value(const ArgType& at, const Argument& arg, const CustomObjects& objects,
                         const std::optional<c10::Device>& device) {
  switch (arg.tag()) {
    case Argument::Tag::as_none: return c10::IValue();
    case Argument::Tag::as_float: return c10::IValue(arg.as_float());
    case Argument::Tag::as_bool: return c10::IValue(arg.as_bool());
    case Argument::Tag::as_string: return c10::IValue(arg.as_string());
    case Argument::Tag::as_complex:
      return c10::IValue(c10::complex<double>(arg.as_complex().real, arg.as_complex().imag));
    case Argument::Tag::as_floats: {
      if (at.base == "Scalar") {
        std::vector<c10::IValue> items(arg.as_floats().begin(), arg.as_floats().end());
        return number_list(items);
      }
      return c10::IValue(c10::List<double>(arg.as_floats()));
    }
    case Argument::Tag::as_bools: {
      if (at.base == "Scalar") {
        std::vector<c10::IValue> items;
        for (bool b : arg.as_bools()) items.emplace_back(b);
        return number_list(items);
      }
      c10::List<bool> list;
      for (bool b : arg.as_bools()) list.push_back(b);
      return c10::IValue(std::move(list));
    }
    case Argument::Tag::as_strings: return c10::IValue(c10::List<std::string>(arg.as_strings()));
    case Argument::Tag::as_scalar_type: return c10::IValue(to_c10(arg.as_scalar_type()));
    case Argument::Tag::as_layout: return c10::IValue(to_c10(arg.as_layout()));
    case Argument::Tag::as_memory_format: return c10::IValue(to_c10(arg.as_memory_format()));
    case Argument::Tag::as_device: return c10::IValue(runtime_device(arg.as_device(), device));
    case Argument::Tag::as_custom_obj: {
      const auto& ref = arg.as_custom_obj();
      auto it = objects.find(ref.name);
      if (it == objects.end())
        throw UnsupportedError("no custom object named `" + ref.name + "` (" + ref.class_fqn +
                               ") was given to the executor");
      const auto& type = it->second.type();
      if (ref.class_fqn != at.class_type->str())
        throw UnsupportedError("the spec names class `" + ref.class_fqn + "`, the op takes `" +
                               at.class_type->str() + "`");
      if (!type->isSubtypeOf(*at.class_type))
        throw UnsupportedError("custom object `" + ref.name + "` is a `" + type->str() + "`, the op takes `" +
                               at.class_type->str() + "`");
      return it->second;
    }
    default:
      throw UnsupportedError("member `" + std::string(arg.type()) + "` cannot be an input");
  }
}

// A torch-written enum default in c10's numbering (`as_int` for a ScalarType/Layout/MemoryFormat).
c10::IValue c10_enum_value(const ArgType& at, std::int64_t v) {
  if (at.base == "ScalarType") return c10::IValue(scalar_type_from_c10(v));
  if (at.base == "Layout") return c10::IValue(layout_from_c10(v));
  return c10::IValue(memory_format_from_c10(v));
}

struct Counters {
  std::uint32_t tensors = 0, ints = 0;
};

// Either a static IValue (returned) or a Fill appended to `plan.fills` (placeholder returned).
c10::IValue static_or_fill(const std::string& label, const c10::Argument& p, const ArgType& at, const Argument& arg,
                           std::uint32_t stack_index, bool wrapped, Counters& n, NodePlan& plan,
                           const CustomObjects& objects, const std::optional<c10::Device>& device) {
  auto fill = [&](FillKind kind, std::uint32_t start, std::uint32_t count, std::vector<bool> pattern = {}) {
    plan.fills.push_back(Fill{stack_index, kind, start, count, std::move(pattern), p.name()});
    return c10::IValue();
  };
  if (at.slot_kind(arg.type()) == SlotKind::Static) {
    if (arg.is_as_int()) {  // an enum (ABI_ENUM_TYPES) written by torch in c10's numbering
      try {
        return c10_enum_value(at, arg.as_int());
      } catch (const UnsupportedError& e) {
        throw SpecMismatchError(label + ": argument `" + p.name() + "` (as_int, c10 " + at.base + "): " + e.what());
      }
    }
    try {
      return static_value(at, arg, objects, device);
    } catch (const UnsupportedError& e) {
      throw SpecMismatchError(label + ": argument `" + p.name() + "` (" + std::string(arg.type()) + "): " + e.what());
    }
  }
  switch (arg.tag()) {  // the slot members of ABI_INT_SLOT_MEMBERS and ABI_TENSOR_SLOT_MEMBERS
    case Argument::Tag::as_int:
    case Argument::Tag::as_sym_int: return fill(FillKind::Int, n.ints++, 1);
    case Argument::Tag::as_tensor:
      return fill(wrapped ? FillKind::Wrapped : FillKind::Tensor, n.tensors++, 1);
    case Argument::Tag::as_tensors: {
      auto count = static_cast<std::uint32_t>(arg.as_tensors().size());
      if (at.elem_optional) {
        fill(FillKind::OptTensors, n.tensors, count, std::vector<bool>(count, true));
      } else {
        fill(FillKind::Tensors, n.tensors, count);
      }
      n.tensors += count;
      return c10::IValue();
    }
    case Argument::Tag::as_optional_tensors: {
      std::vector<bool> pattern;
      std::uint32_t count = 0;
      for (const auto& item : arg.as_optional_tensors()) {
        pattern.push_back(item.is_as_tensor());
        count += item.is_as_tensor();
      }
      fill(FillKind::OptTensors, n.tensors, count, std::move(pattern));
      n.tensors += count;
      return c10::IValue();
    }
    case Argument::Tag::as_ints:
    case Argument::Tag::as_sym_ints: {
      auto count = static_cast<std::uint32_t>(arg.is_as_ints() ? arg.as_ints().size() : arg.as_sym_ints().size());
      fill(at.base == "Scalar" ? FillKind::ScalarInts : FillKind::Ints, n.ints, count);
      n.ints += count;
      return c10::IValue();
    }
    default:  // a slot member the ABI tables gained without a fill here
      throw std::logic_error("externspec: no fill for slot member `" + std::string(arg.type()) + "`");
  }
}

void check_omitted(const std::string& label, const c10::Argument& p, const ArgType& at, const c10::Argument* exported) {
  if (!p.default_value()) {
    std::string added = exported == nullptr ? " (added to the op after export?)" : "";
    throw SpecMismatchError(label + ": argument `" + p.name() + "` of type `" + at.str() +
                            "` has no default in the runtime op schema and the spec does not give it" + added);
  }
  if (exported != nullptr && exported->default_value()) {
    const auto& before = *exported->default_value();
    const auto& now = *p.default_value();
    auto before_type = arg_type(exported->real_type()).str();
    if (!(before == now) || before_type != at.str())
      throw SpecMismatchError(label + ": argument `" + p.name() + "` was omitted as equal to its default `" +
                              str_of(before) + "` (type `" + before_type + "`) at export, but the runtime default is `" +
                              str_of(now) + "` (type `" + at.str() + "`)");
  }
}

void check_member(const std::string& label, const c10::Argument& p, const ArgType& at, const Argument& arg,
                  const c10::Argument* exported) {
  std::string_view member = arg.type();
  if (!at.supported() && member != "as_none")
    throw SpecMismatchError(label + ": argument `" + p.name() + "` has runtime type `" + at.str() +
                            "`, which the extern-kernel ABI cannot carry");
  if (at.accepts(member)) return;
  std::string was = exported ? "type `" + arg_type(exported->real_type()).str() + "` at export, " : "";
  auto want = at.members();
  if (at.optional) want.push_back("as_none");
  throw SpecMismatchError(label + ": argument `" + p.name() + "` is `" + std::string(member) + "` in the spec (" + was +
                          "runtime type `" + at.str() + "` accepts " + join(want, ", ") + ")");
}

void plan_outputs(const std::string& label, const c10::FunctionSchema& schema,
                  const std::optional<c10::FunctionSchema>& exported, const Node& node, NodePlan& plan,
                  std::vector<std::int64_t>& int_returns) {
  const auto& returns = schema.returns();
  const auto& outs = node.outputs;
  auto runtime_types = return_types(returns);
  if (exported) {
    auto export_types = return_types(exported->returns());
    if (export_types != runtime_types)
      throw SpecMismatchError(label + ": the op's returns changed since export: (" + export_types + ") at export, (" +
                              runtime_types + ") now");
  }
  if (outs.size() != returns.size()) {
    std::vector<std::string_view> members;
    for (const auto& o : outs) members.push_back(o.type());
    throw SpecMismatchError(label + ": the spec has " + std::to_string(outs.size()) + " outputs (" +
                            (members.empty() ? std::string("none") : join(members, ", ")) +
                            ") but the runtime op returns (" + runtime_types + ")");
  }
  std::uint32_t t0 = static_cast<std::uint32_t>(plan.num_input_tensors), n_tensors = 0;
  std::uint32_t i0 = static_cast<std::uint32_t>(plan.num_input_ints);
  for (std::size_t i = 0; i < returns.size(); ++i) {
    auto at = arg_type(returns[i].real_type());
    auto want = at.return_member();
    if (want.empty())
      throw SpecMismatchError(label + ": return " + std::to_string(i) + " has runtime type `" + at.str() +
                              "`, which the ABI cannot return");
    const Argument& out = outs[i];
    if (out.type() != want)
      throw SpecMismatchError(label + ": output " + std::to_string(i) + " is `" + std::string(out.type()) +
                              "` in the spec, but runtime return type `" + at.str() + "` is `" + std::string(want) + "`");
    switch (out.tag()) {
      case Argument::Tag::as_tensor:
        plan.outputs.push_back({OutKind::Tensor, t0 + n_tensors, 1});
        n_tensors += 1;
        break;
      case Argument::Tag::as_tensors: {
        auto count = static_cast<std::uint32_t>(out.as_tensors().size());
        plan.outputs.push_back({OutKind::Tensors, t0 + n_tensors, count});
        n_tensors += count;
        break;
      }
      case Argument::Tag::as_optional_tensor: {
        std::uint32_t present = out.as_optional_tensor().is_as_tensor() ? 1 : 0;
        plan.outputs.push_back({OutKind::OptTensor, t0 + n_tensors, present});
        n_tensors += present;
        break;
      }
      case Argument::Tag::as_int:
        plan.outputs.push_back({OutKind::Int, i0 + static_cast<std::uint32_t>(int_returns.size()), 0});
        int_returns.push_back(out.as_int());
        break;
      default:
        plan.outputs.push_back({OutKind::None, 0, 0});
    }
  }
  plan.num_tensors = plan.num_input_tensors + n_tensors;
  plan.num_ints = plan.num_input_ints + static_cast<std::int64_t>(int_returns.size());
}

// torch 2.13's wrapper passes the schema default of a kwarg-only argument its file omits (see
// abi/executor.py `_passed_default` and docs/torch-compat.md): the default as the exporter writes it. Only
// int-valued defaults take slots; any other default is static, so it stays in the plan's stack.
std::optional<Argument> passed_default(const c10::Argument& p, const ArgType& at) {
  const c10::IValue& d = *p.default_value();
  bool int_base = at.base == "int" || at.base == "SymInt" || at.base == "Scalar";
  if (int_base && !at.is_list && d.isInt()) return Argument::make_as_int(d.toInt());
  if (int_base && at.is_list && d.isIntList()) return Argument::make_as_ints(d.toIntVector());
  return std::nullopt;
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
    throw SpecMismatchError(label + ": refused by the executor's op policy: " + said + " (the kernel " +
                            std::string(g.reason) + ")");
  }
}

NodePlan plan_node(std::size_t index, const ExternKernelNode& ekn, const CustomObjects& objects,
                   bool torch_written, const std::vector<std::string>& allow_ops,
                   const std::optional<c10::Device>& device) {
  const Node& node = ekn.node;
  std::string label = "node " + std::to_string(index) + " `" + ekn.name + "` (" + node.target + ")";
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

  std::optional<c10::FunctionSchema> exported;
  if (const std::string* text = metadata(node, METADATA_OP_SCHEMA)) {
    check_op_schema_text(label, METADATA_OP_SCHEMA, *text);
    try {
      exported = torch::jit::parseSchema(*text);
    } catch (const std::exception& e) {
      std::string what = e.what();
      if (const auto* ce = dynamic_cast<const c10::Error*>(&e)) what = ce->what_without_backtrace();
      throw SpecMismatchError(label + ": metadata `" + std::string(METADATA_OP_SCHEMA) + "` is not an op schema: " + what);
    }
  }
  std::unordered_map<std::string_view, const c10::Argument*> exported_args;
  if (exported)
    for (const auto& a : exported->arguments()) exported_args.emplace(a.name(), &a);
  auto exported_arg = [&](std::string_view name) -> const c10::Argument* {
    auto it = exported_args.find(name);
    return it == exported_args.end() ? nullptr : it->second;
  };

  const auto& params = schema.arguments();
  std::unordered_map<std::string_view, std::size_t> position;
  for (std::size_t i = 0; i < params.size(); ++i) position.emplace(params[i].name(), i);
  std::vector<const Argument*> given(params.size(), nullptr);
  std::ptrdiff_t last = -1;
  for (const auto& named : node.inputs) {
    if (torchbind && &named == &node.inputs[1]) continue;  // the method's name, not an argument
    const std::string& name = named.name;
    auto it = position.find(name);
    if (it != position.end() && given[it->second] != nullptr)
      throw SpecMismatchError(label + ": argument `" + name + "` is given twice");
    if (it == position.end()) {
      const c10::Argument* ex = exported_arg(name);
      std::string was = ex ? " (type `" + arg_type(ex->real_type()).str() + "` at export)" : "";
      throw SpecMismatchError(label + ": argument `" + name + "` (" + std::string(named.arg.type()) + ")" + was +
                              " is not in the runtime op schema `" + str_of(schema) + "`; it was removed or renamed");
    }
    auto pos = static_cast<std::ptrdiff_t>(it->second);
    if (pos < last)
      throw SpecMismatchError(label + ": argument `" + name + "` comes after `" + params[last].name() +
                              "` in the spec but before it in the op schema; the flat arrays are laid out in schema "
                              "order, so this spec is ambiguous");
    last = pos;
    given[it->second] = &named.arg;
  }
  if (!torchbind) check_guards(label, qualified, params, given);

  std::unordered_set<std::string> wrapped;
  if (const std::string* text = metadata(node, METADATA_WRAPPED_NUMBERS)) {
    std::size_t start = 0;
    while (start <= text->size()) {
      auto comma = text->find(',', start);
      if (comma == std::string::npos) comma = text->size();
      if (comma > start) wrapped.insert(text->substr(start, comma - start));
      start = comma + 1;
    }
  }

  Counters n;
  plan.stack.reserve(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const c10::Argument& p = params[i];
    ArgType at = arg_type(p.real_type());
    const Argument* arg = given[i];
    std::optional<Argument> passed;
    if (arg == nullptr) {
      check_omitted(label, p, at, exported_arg(p.name()));
      if (torch_written && p.kwarg_only()) passed = passed_default(p, at);
      if (!passed) {
        plan.stack.push_back(*p.default_value());
        continue;
      }
      arg = &*passed;
    }
    check_member(label, p, at, *arg, exported_arg(p.name()));
    plan.stack.push_back(static_or_fill(label, p, at, *arg, static_cast<std::uint32_t>(i),
                                        wrapped.count(p.name()) > 0, n, plan, objects, device));
  }
  plan.num_input_tensors = n.tensors;
  plan.num_input_ints = n.ints;
  plan.num_returns = schema.returns().size();
  std::vector<std::int64_t> int_returns;
  plan_outputs(label, schema, exported, node, plan, int_returns);
  return plan;
}

// ---- call time ----

// The messages are built out of line: the checks stay small enough to inline into the call path.
[[noreturn]] __attribute__((noinline, cold)) void bad_input_tensor(const NodePlan& plan, const Fill& f,
                                                                   const at::Tensor* t, std::uint32_t k) {
  throw CallError(plan.label + ": tensor slot " + std::to_string(k) + " (argument `" + std::string(f.arg_name) +
                  "`) is " + (t == nullptr ? "a null handle" : "an undefined tensor"));
}

[[noreturn]] __attribute__((noinline, cold)) void null_output_slot(const NodePlan& plan, std::uint32_t k,
                                                                   std::size_t ret) {
  throw CallError(plan.label + ": output tensor slot " + std::to_string(k) + " (return " + std::to_string(ret) +
                  ") is a null handle");
}

const at::Tensor& input_tensor(const NodePlan& plan, const Fill& f, AtenTensorHandle* tensors, std::uint32_t k) {
  const auto* t = reinterpret_cast<const at::Tensor*>(tensors[k]);
  if (C10_UNLIKELY(t == nullptr || !t->defined())) bad_input_tensor(plan, f, t, k);
  return *t;
}

at::Tensor& output_slot(const NodePlan& plan, AtenTensorHandle* tensors, std::uint32_t k, std::size_t ret) {
  auto* t = reinterpret_cast<at::Tensor*>(tensors[k]);
  if (C10_UNLIKELY(t == nullptr)) null_output_slot(plan, k, ret);
  return *t;
}

// Python's `type(r).__name__` for the kinds a return can wrongly be.
std::string kind_of(const c10::IValue& v) {
  if (v.isNone() || (v.isTensor() && !v.toTensor().defined())) return "NoneType";
  if (v.isTensor()) return "Tensor";
  if (v.isList()) return "list";
  if (v.isInt()) return "int";
  if (v.isDouble()) return "float";
  if (v.isBool()) return "bool";
  return v.tagKind();
}

void store_outputs(const NodePlan& plan, std::vector<c10::IValue>& stack, const int64_t* ints,
                   AtenTensorHandle* tensors) {
  if (stack.size() != plan.num_returns)
    throw CallError(plan.label + ": the op left " + std::to_string(stack.size()) + " values on the stack, its schema "
                    "returns " + std::to_string(plan.num_returns));
  for (std::size_t i = 0; i < plan.outputs.size(); ++i) {
    const Output& o = plan.outputs[i];
    c10::IValue& r = stack[i];
    switch (o.kind) {
      case OutKind::Tensor:
        // An undefined tensor is None to Python (and so to the Python executor).
        if (!r.isTensor() || !r.toTensor().defined())
          throw CallError(plan.label + ": return " + std::to_string(i) + " should be a Tensor, the op returned " +
                          kind_of(r));
        output_slot(plan, tensors, o.slot, i) = std::move(r).toTensor();
        break;
      case OutKind::Tensors: {
        if (!r.isTensorList())
          throw CallError(plan.label + ": return " + std::to_string(i) + " should be a list of Tensors, the op returned " +
                          kind_of(r));
        auto list = std::move(r).toTensorList();
        if (list.size() != o.extra)
          throw CallError(plan.label + ": return " + std::to_string(i) + " is a list of " + std::to_string(list.size()) +
                          " tensors, but the spec has " + std::to_string(o.extra) + " output slots");
        for (std::uint32_t k = 0; k < o.extra; ++k) output_slot(plan, tensors, o.slot + k, i) = list.get(k);
        break;
      }
      case OutKind::OptTensor: {
        bool none = r.isNone() || (r.isTensor() && !r.toTensor().defined());
        if (none != (o.extra == 0))
          throw CallError(plan.label + ": return " + std::to_string(i) + " was " + (o.extra == 0 ? "None" : "a Tensor") +
                          " at export, the op returned " + (none ? "None" : "a Tensor"));
        if (o.extra) output_slot(plan, tensors, o.slot, i) = std::move(r).toTensor();
        break;
      }
      case OutKind::Int: {
        std::optional<std::int64_t> value;
        if (r.isInt()) value = r.toInt();
        else if (r.isSymInt()) value = r.toSymInt().maybe_as_int();
        if (!value || *value != ints[o.slot])
          throw CallError(plan.label + ": int return " + std::to_string(i) + " is " +
                          (value ? std::to_string(*value) : kind_of(r)) + ", but the caller expects " +
                          std::to_string(ints[o.slot]) + " (int_args[" + std::to_string(o.slot) +
                          "]); the compiled code specialized on that value");
        break;
      }
      case OutKind::None: break;
    }
  }
}

// A Python number passed for `Tensor` travels as a 0-dim tensor; the dispatcher's Python binding
// would wrap the number again (double/long/complex-double/bool, wrapped_number set), which is what
// keeps its weak type-promotion semantics. Do the same.
at::Tensor rewrap_number(const at::Tensor& t) {
  c10::Scalar s = t.item();
  c10::ScalarType type = s.isFloatingPoint() ? c10::kDouble
                         : s.isComplex()     ? c10::kComplexDouble
                         : s.isBoolean()     ? c10::kBool
                                             : c10::kLong;
  at::Tensor w = at::scalar_tensor(s, at::TensorOptions().dtype(type).device(c10::kCPU));
  w.unsafeGetTensorImpl()->set_wrapped_number(true);
  return w;
}

// Pushes the value a dynamic argument takes from the arrays onto `stack`.
void push_fill(std::vector<c10::IValue>& stack, const NodePlan& plan, const Fill& f, const int64_t* ints,
               AtenTensorHandle* tensors) {
  switch (f.kind) {
    case FillKind::Tensor: stack.emplace_back(input_tensor(plan, f, tensors, f.start)); return;
    case FillKind::Int: stack.emplace_back(ints[f.start]); return;
    case FillKind::Wrapped: stack.emplace_back(rewrap_number(input_tensor(plan, f, tensors, f.start))); return;
    case FillKind::Tensors: {
      c10::List<at::Tensor> list;
      list.reserve(f.count);
      for (std::uint32_t k = 0; k < f.count; ++k) list.push_back(input_tensor(plan, f, tensors, f.start + k));
      stack.emplace_back(std::move(list));
      return;
    }
    case FillKind::OptTensors: {
      c10::List<std::optional<at::Tensor>> list;
      list.reserve(f.pattern.size());
      std::uint32_t k = f.start;
      for (bool present : f.pattern) {
        if (present) list.push_back(input_tensor(plan, f, tensors, k++));
        else list.push_back(std::nullopt);
      }
      stack.emplace_back(std::move(list));
      return;
    }
    case FillKind::Ints: stack.emplace_back(c10::List<int64_t>(c10::ArrayRef<int64_t>(ints + f.start, f.count))); return;
    case FillKind::ScalarInts: {
      c10::impl::GenericList list(c10::NumberType::get());
      list.reserve(f.count);
      for (std::uint32_t k = 0; k < f.count; ++k) list.push_back(c10::IValue(ints[f.start + k]));
      stack.emplace_back(std::move(list));
      return;
    }
  }
  throw std::logic_error("externspec: no fill for kind " + std::to_string(static_cast<int>(f.kind)));
}

// The boxed stack of a call. Each thread keeps one vector for its calls so that a call does not
// allocate; only its capacity outlives the call: the values are cleared on the way out (returned or
// thrown), so no tensor is held past its call. A call made while the thread's vector is in use (a
// kernel that runs a model through this executor) gets a vector of its own.
struct CallStack {
  struct Scratch {
    std::vector<c10::IValue> stack;
    bool busy = false;
  };
  static thread_local Scratch scratch;

  CallStack() : shared(scratch), owner(!shared.busy), stack(owner ? shared.stack : own.emplace()) {
    shared.busy = true;
  }
  ~CallStack() {
    stack.clear();
    if (owner) shared.busy = false;
  }
  CallStack(const CallStack&) = delete;
  CallStack& operator=(const CallStack&) = delete;

  Scratch& shared;
  bool owner;
  std::optional<std::vector<c10::IValue>> own;  // a re-entrant call's
  std::vector<c10::IValue>& stack;
};
thread_local CallStack::Scratch CallStack::scratch;

}  // namespace

ProxyExecutor::ProxyExecutor(std::string_view json, CustomObjects custom_objects, std::vector<std::string> allow_ops,
                             std::optional<c10::Device> device)
    : custom_objects_(std::move(custom_objects)), device_(device) {
  for (const auto& entry : allow_ops)
    if (!is_allow_pattern(entry))
      throw std::invalid_argument("allow_ops entry '" + entry +
                                  "' is not of the form ns::name, ns::name.overload or ns::*");
  ExternKernelNodes spec = decode<ExternKernelNodes>(json);
  // Node names are the buffers torch generated them for: a repeat means the spec was not written by
  // one export, and errors naming that node would be ambiguous.
  std::unordered_map<std::string_view, std::size_t> seen;
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    auto [it, fresh] = seen.emplace(spec.nodes[i].name, i);
    if (!fresh) {
      SpecMismatchError e("nodes " + std::to_string(it->second) + " and " + std::to_string(i) + " are both named `" +
                          spec.nodes[i].name + "`; node names must be unique");
      e.node = i;
      throw e;
    }
  }
  plans_.reserve(spec.nodes.size());
  bool torch_written = !spec.schema_version.has_value();
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    try {
      plans_.push_back(plan_node(i, spec.nodes[i], custom_objects_, torch_written, allow_ops, device_));
    } catch (NodeError& e) {  // the errors of planning node i are about node i
      e.node = i;
      throw;
    }
  }
}

void ProxyExecutor::check_lengths(const NodePlan& plan, std::int64_t num_ints, std::int64_t num_tensors) {
  if (num_tensors != plan.num_tensors || num_ints != plan.num_ints)
    throw CallError(plan.label + ": expected " + std::to_string(plan.num_input_tensors) + " input + " +
                    std::to_string(plan.num_tensors - plan.num_input_tensors) + " output tensor slots and " +
                    std::to_string(plan.num_input_ints) + " input + " +
                    std::to_string(plan.num_ints - plan.num_input_ints) + " int-return slots, got " +
                    std::to_string(num_tensors) + " tensors and " + std::to_string(num_ints) + " ints");
}

std::exception_ptr ProxyExecutor::take_last_error() {
  std::exception_ptr e = last_error;
  last_error = nullptr;
  return e;
}

void ProxyExecutor::call_function(int extern_node_index, int num_ints, int64_t* flatten_int_args, int num_tensors,
                             AtenTensorHandle* flatten_tensor_args) {
  try {
    run(extern_node_index, num_ints, flatten_int_args, num_tensors, flatten_tensor_args);
  } catch (...) {
    // The first failure of a run: a model that ignores the status (torch 2.11, 2.12) calls on.
    if (!last_error) last_error = std::current_exception();
    throw;
  }
}

void ProxyExecutor::run(int index, int num_ints, const int64_t* ints, int num_tensors, AtenTensorHandle* tensors) const {
  if (index < 0 || static_cast<std::size_t>(index) >= plans_.size())
    throw CallError("extern node index " + std::to_string(index) + " out of range: the spec has " +
                    std::to_string(plans_.size()) + " nodes");
  const NodePlan& plan = plans_[static_cast<std::size_t>(index)];
  check_lengths(plan, num_ints, num_tensors);
  if ((num_ints > 0 && ints == nullptr) || (num_tensors > 0 && tensors == nullptr))
    throw CallError(plan.label + ": null " + (num_ints > 0 && ints == nullptr ? "int" : "tensor") + " array");

  CallStack lease;
  std::vector<c10::IValue>& stack = lease.stack;
  auto fill = plan.fills.begin();  // in stack order, at most one per entry (plan_node appends them so)
  for (std::size_t i = 0; i < plan.stack.size(); ++i) {
    if (fill == plan.fills.end() || fill->stack_index != i) {
      stack.push_back(plan.stack[i]);
    } else {
      push_fill(stack, plan, *fill, ints, tensors);
      ++fill;
    }
  }
  plan.call(stack);
  store_outputs(plan, stack, ints, tensors);
}

}  // namespace externspec
