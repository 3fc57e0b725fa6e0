#include "executor/layout.h"

#include <torch/csrc/jit/frontend/function_schema_parser.h>
#include <c10/util/Exception.h>

#include <optional>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <externspec/torch/errors.h>
#include <externspec/messages.h>

#include "executor/abi.h"
#include "executor/op_policy.h"
#include "executor/ops.h"
#include "executor/torch_types.h"

namespace externspec {
namespace {

template <class T>
std::string str_of(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

const std::string* metadata(const Node& node, std::string_view key) {
  auto it = node.metadata.find(key);
  return it == node.metadata.end() ? nullptr : &it->second;
}

namespace {

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
      throw UnsupportedError(message(Message::MEMBER_NOT_AN_INPUT, {{"member", arg.type()}}));
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
c10::IValue place(const std::string& label, const c10::Argument& p, const ArgType& at, const Argument& arg,
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
    std::string added = exported == nullptr ? message(Message::ADDED_AFTER_EXPORT) : "";
    throw SpecMismatchError(message(Message::ARGUMENT_WITHOUT_DEFAULT,
                                    {{"label", label}, {"name", p.name()}, {"type", at.str()}, {"added", added}}));
  }
  if (exported != nullptr && exported->default_value()) {
    const auto& before = *exported->default_value();
    const auto& now = *p.default_value();
    auto before_type = arg_type(exported->real_type()).str();
    if (!(before == now) || before_type != at.str())
      throw SpecMismatchError(message(Message::DEFAULT_CHANGED, {{"label", label},
                                                                 {"name", p.name()},
                                                                 {"before", str_of(before)},
                                                                 {"before_type", before_type},
                                                                 {"now", str_of(now)},
                                                                 {"now_type", at.str()}}));
  }
}

void check_member(const std::string& label, const c10::Argument& p, const ArgType& at, const Argument& arg,
                  const c10::Argument* exported) {
  std::string_view member = arg.type();
  if (!at.supported() && member != "as_none")
    throw SpecMismatchError(
        message(Message::TYPE_NOT_CARRIED, {{"label", label}, {"name", p.name()}, {"type", at.str()}}));
  if (at.accepts(member)) return;
  std::string was =
      exported ? message(Message::TYPE_WAS_AT_EXPORT, {{"type", arg_type(exported->real_type()).str()}}) : "";
  auto want = at.members();
  if (at.optional) want.push_back("as_none");
  throw SpecMismatchError(message(Message::MEMBER_NOT_ACCEPTED, {{"label", label},
                                                                 {"name", p.name()},
                                                                 {"member", member},
                                                                 {"was", was},
                                                                 {"type", at.str()},
                                                                 {"accepted", join(want, ", ")}}));
}

void place_outputs(const std::string& label, const c10::FunctionSchema& schema,
                  const std::optional<c10::FunctionSchema>& exported, const Node& node, NodePlan& plan,
                  std::vector<std::int64_t>& int_returns) {
  const auto& returns = schema.returns();
  const auto& outs = node.outputs;
  auto runtime_types = return_types(returns);
  if (exported) {
    auto export_types = return_types(exported->returns());
    if (export_types != runtime_types)
      throw SpecMismatchError(message(Message::RETURNS_CHANGED,
                                      {{"label", label}, {"exported", export_types}, {"now", runtime_types}}));
  }
  if (outs.size() != returns.size()) {
    std::vector<std::string_view> members;
    for (const auto& o : outs) members.push_back(o.type());
    throw SpecMismatchError(message(Message::OUTPUTS_COUNT, {{"label", label}, {"count", std::to_string(outs.size())},
        {"members", members.empty() ? std::string("none") : join(members, ", ")}, {"returns", runtime_types}}));
  }
  std::uint32_t t0 = static_cast<std::uint32_t>(plan.num_input_tensors), n_tensors = 0;
  std::uint32_t i0 = static_cast<std::uint32_t>(plan.num_input_ints);
  for (std::size_t i = 0; i < returns.size(); ++i) {
    auto at = arg_type(returns[i].real_type());
    auto want = at.return_member();
    if (want.empty())
      throw SpecMismatchError(message(Message::RETURN_NOT_CARRIED,
                                      {{"label", label}, {"index", std::to_string(i)}, {"type", at.str()}}));
    const Argument& out = outs[i];
    if (out.type() != want)
      throw SpecMismatchError(message(Message::OUTPUT_MEMBER, {{"label", label}, {"index", std::to_string(i)},
          {"member", out.type()}, {"type", at.str()}, {"want", want}}));
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
// abi/layout.py `_passed_default` and docs/torch-compat.md): the default as the exporter writes it. Only
// int-valued defaults take slots; any other default is static, so it stays in the plan's stack.
std::optional<Argument> passed_default(const c10::Argument& p, const ArgType& at) {
  const c10::IValue& d = *p.default_value();
  bool int_base = at.base == "int" || at.base == "SymInt" || at.base == "Scalar";
  if (int_base && !at.is_list && d.isInt()) return Argument::make_as_int(d.toInt());
  if (int_base && at.is_list && d.isIntList()) return Argument::make_as_ints(d.toIntVector());
  return std::nullopt;
}
}  // namespace

std::optional<c10::FunctionSchema> export_schema(const std::string& label, const Node& node) {
  const std::string* text = metadata(node, METADATA_OP_SCHEMA);
  if (text == nullptr) return std::nullopt;
  check_op_schema_text(label, METADATA_OP_SCHEMA, *text);
  try {
    return torch::jit::parseSchema(*text);
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (const auto* ce = dynamic_cast<const c10::Error*>(&e)) what = ce->what_without_backtrace();
    throw SpecMismatchError(
        message(Message::NOT_AN_OP_SCHEMA, {{"label", label}, {"key", METADATA_OP_SCHEMA}, {"why", what}}));
  }
}

namespace {

// The export-time schema's arguments by name (empty without one).
class ExportedArgs {
 public:
  explicit ExportedArgs(const std::optional<c10::FunctionSchema>& exported) {
    if (exported)
      for (const auto& a : exported->arguments()) by_name_.emplace(a.name(), &a);
  }
  const c10::Argument* operator()(std::string_view name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<std::string_view, const c10::Argument*> by_name_;
};

}  // namespace

std::vector<const Argument*> given_inputs(const std::string& label, const Node& node, const c10::FunctionSchema& schema,
                                          const std::optional<c10::FunctionSchema>& exported, bool torchbind) {
  const ExportedArgs exported_arg(exported);
  const auto& params = schema.arguments();
  std::unordered_map<std::string_view, std::size_t> position;
  for (std::size_t i = 0; i < params.size(); ++i) position.emplace(params[i].name(), i);
  std::vector<const Argument*> out(params.size(), nullptr);
  std::ptrdiff_t last = -1;
  for (const auto& named : node.inputs) {
    if (torchbind && &named == &node.inputs[1]) continue;
    const std::string& name = named.name;
    auto it = position.find(name);
    if (it != position.end() && out[it->second] != nullptr)
      throw SpecMismatchError(message(Message::ARGUMENT_GIVEN_TWICE, {{"label", label}, {"name", name}}));
    if (it == position.end()) {
      const c10::Argument* ex = exported_arg(name);
      std::string was = ex ? message(Message::TYPE_AT_EXPORT, {{"type", arg_type(ex->real_type()).str()}}) : "";
      throw SpecMismatchError(message(Message::ARGUMENT_NOT_IN_SCHEMA, {{"label", label},
                                                                        {"name", name},
                                                                        {"member", named.arg.type()},
                                                                        {"was", was},
                                                                        {"schema", str_of(schema)}}));
    }
    auto pos = static_cast<std::ptrdiff_t>(it->second);
    if (pos < last)
      throw SpecMismatchError(message(Message::ARGUMENT_OUT_OF_ORDER,
                                      {{"label", label}, {"name", name}, {"before", params[last].name()}}));
    last = pos;
    out[it->second] = &named.arg;
  }
  return out;
}

namespace {

// The arguments the exporter marked as Python numbers passed for `Tensor` (`externspec.wrapped_numbers`).
std::unordered_set<std::string> wrapped_numbers(const Node& node) {
  std::unordered_set<std::string> wrapped;
  const std::string* text = metadata(node, METADATA_WRAPPED_NUMBERS);
  if (text == nullptr) return wrapped;
  std::size_t start = 0;
  while (start <= text->size()) {
    auto comma = text->find(',', start);
    if (comma == std::string::npos) comma = text->size();
    if (comma > start) wrapped.insert(text->substr(start, comma - start));
    start = comma + 1;
  }
  return wrapped;
}

}  // namespace

std::string node_label(std::size_t index, const std::string& name, const std::string& target) {
  return "node " + std::to_string(index) + " `" + name + "` (" + target + ")";
}

void lay_out(const std::string& label, const Node& node, const c10::FunctionSchema& schema,
             const std::optional<c10::FunctionSchema>& exported, const std::vector<const Argument*>& inputs,
             CallLayout call_layout, NodePlan& plan, const CustomObjects& objects,
             const std::optional<c10::Device>& device) {
  const bool defaults_passed = call_layout == CallLayout::OMITTED_DEFAULTS_PASSED;
  const ExportedArgs exported_arg(exported);
  const auto wrapped = wrapped_numbers(node);
  const auto& params = schema.arguments();
  Counters n;
  plan.stack.reserve(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const c10::Argument& p = params[i];
    ArgType at = arg_type(p.real_type());
    const Argument* arg = inputs[i];
    std::optional<Argument> passed;
    if (arg == nullptr) {
      check_omitted(label, p, at, exported_arg(p.name()));
      if (defaults_passed && p.kwarg_only()) passed = passed_default(p, at);
      if (!passed) {
        plan.stack.push_back(*p.default_value());
        continue;
      }
      arg = &*passed;
    }
    check_member(label, p, at, *arg, exported_arg(p.name()));
    const std::uint32_t ints_before = n.ints;
    plan.stack.push_back(place(label, p, at, *arg, static_cast<std::uint32_t>(i), wrapped.count(p.name()) > 0, n,
                               plan, objects, device));
    if (passed) plan.passed_default_ints += n.ints - ints_before;
  }
  plan.num_input_tensors = n.tensors;
  plan.num_input_ints = n.ints;
  plan.num_returns = schema.returns().size();
  std::vector<std::int64_t> int_returns;
  place_outputs(label, schema, exported, node, plan, int_returns);
}

}  // namespace externspec
