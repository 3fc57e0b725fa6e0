#include "abi.h"

#include <ATen/core/class_type.h>

#include <algorithm>
#include <utility>

namespace externspec {
namespace {

std::string base_of(const c10::TypePtr& t) {
  switch (t->kind()) {
    case c10::TypeKind::TensorType: return "Tensor";
    case c10::TypeKind::IntType: return "int";
    case c10::TypeKind::SymIntType: return "SymInt";
    case c10::TypeKind::FloatType: return "float";
    case c10::TypeKind::BoolType: return "bool";
    case c10::TypeKind::StringType: return "str";
    case c10::TypeKind::NumberType: return "Scalar";
    case c10::TypeKind::ScalarTypeType: return "ScalarType";
    case c10::TypeKind::LayoutType: return "Layout";
    case c10::TypeKind::MemoryFormatType: return "MemoryFormat";
    case c10::TypeKind::DeviceObjType: return "Device";
    case c10::TypeKind::NoneType: return "NoneType";
    default: return t->str();
  }
}

using Members = std::vector<std::string_view>;

// (base, is_list) -> members, as abi.py's _MEMBERS. Enum types also accept `as_int`: torch 2.13
// writes an enum default it filled in as a c10-numbered int (static, no slot).
const Members* members_of(const std::string& base, bool is_list) {
  static const std::vector<std::pair<std::pair<std::string_view, bool>, Members>> table = {
      {{"Tensor", false}, {"as_tensor"}},
      {{"Tensor", true}, {"as_tensors"}},
      {{"int", false}, {"as_int"}},
      {{"int", true}, {"as_ints"}},
      {{"SymInt", false}, {"as_int", "as_sym_int"}},
      {{"SymInt", true}, {"as_ints", "as_sym_ints"}},
      {{"float", false}, {"as_float"}},
      {{"float", true}, {"as_floats"}},
      {{"bool", false}, {"as_bool"}},
      {{"bool", true}, {"as_bools"}},
      {{"str", false}, {"as_string"}},
      {{"str", true}, {"as_strings"}},
      {{"Scalar", false}, {"as_int", "as_sym_int", "as_float", "as_bool", "as_complex"}},
      {{"Scalar", true}, {"as_ints", "as_sym_ints", "as_floats", "as_bools"}},
      {{"ScalarType", false}, {"as_scalar_type", "as_int"}},
      {{"Layout", false}, {"as_layout", "as_int"}},
      {{"MemoryFormat", false}, {"as_memory_format", "as_int"}},
      {{"Device", false}, {"as_device"}},
  };
  for (const auto& [key, members] : table)
    if (key.first == base && key.second == is_list) return &members;
  return nullptr;
}

}  // namespace

std::string ArgType::str() const {
  std::string text = base + (elem_optional ? "?" : "") + (is_list ? "[]" : "");
  return text + (optional ? "?" : "");
}

std::vector<std::string_view> ArgType::members() const {
  if (elem_optional) {
    if (base == "Tensor" && is_list) return {"as_optional_tensors", "as_tensors"};
    return {};
  }
  // A torchbind object travels by name (C++ executor only: the Python one has no object table).
  if (is_class && !is_list) return {"as_custom_obj"};
  const Members* m = members_of(base, is_list);
  return m ? *m : Members{};
}

bool ArgType::accepts(std::string_view member) const {
  if (member == "as_none" && optional) return true;
  auto m = members();
  return std::find(m.begin(), m.end(), member) != m.end();
}

std::string_view ArgType::return_member() const {
  if (elem_optional) return "";
  if (base == "Tensor" && !optional) return is_list ? "as_tensors" : "as_tensor";
  if (base == "Tensor" && optional && !is_list) return "as_optional_tensor";
  if ((base == "int" || base == "SymInt") && !is_list && !optional) return "as_int";
  if (base == "NoneType" && !is_list && !optional) return "as_none";
  return "";
}

ArgType arg_type(const c10::TypePtr& real_type) {
  ArgType at;
  c10::TypePtr t = real_type;
  if (t->kind() == c10::TypeKind::OptionalType) {
    at.optional = true;
    t = t->expectRef<c10::OptionalType>().getElementType();
  }
  if (t->kind() == c10::TypeKind::ListType) {
    at.is_list = true;
    t = t->expectRef<c10::ListType>().getElementType();
    if (t->kind() == c10::TypeKind::OptionalType) {
      at.elem_optional = true;
      t = t->expectRef<c10::OptionalType>().getElementType();
    }
  }
  at.base = base_of(t);
  if (at.base == "NoneType" && (at.optional || at.is_list)) at.base = t->str();
  if (t->kind() == c10::TypeKind::ClassType && t->expectRef<c10::ClassType>().name() &&
      t->expectRef<c10::ClassType>().name()->qualifiedName().rfind("__torch__.torch.classes.", 0) == 0) {
    at.is_class = true;
    at.class_type = t;
  }
  return at;
}

}  // namespace externspec
