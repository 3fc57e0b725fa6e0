#include "executor/abi.h"

#include <ATen/core/class_type.h>
#include <externspec/externspec.h>

#include <algorithm>

namespace externspec {
namespace {

// A torchbind class: the C++ executor's one addition to the ABI tables. Its objects travel by
// name as `as_custom_obj` (the Python executor has no object table and refuses them at load).
bool is_torchbind_class(const c10::TypePtr& t) {
  if (t->kind() != c10::TypeKind::ClassType) return false;
  const auto& name = t->expectRef<c10::ClassType>().name();
  return name && name->qualifiedName().rfind("__torch__.torch.classes.", 0) == 0;
}

}  // namespace

std::string ArgType::spelling() const {
  return base + (elem_optional ? "?" : "") + (is_list ? "[]" : "");
}

std::vector<std::string_view> ArgType::members() const {
  if (is_class && !is_list && !elem_optional) return {"as_custom_obj"};
  const auto* members = ABI_INPUT_MEMBERS.find(spelling());
  if (!members) return {};
  return {members->begin(), members->end()};
}

bool ArgType::accepts(std::string_view member) const {
  if (member == "as_none" && optional) return true;
  auto m = members();
  return std::find(m.begin(), m.end(), member) != m.end();
}

bool ArgType::is_enum() const { return !is_list && ABI_ENUM_TYPES.contains(base); }

std::string_view ArgType::return_member() const {
  const auto* member = ABI_RETURN_MEMBERS.find(str());
  return member ? *member : std::string_view();
}

SlotKind ArgType::slot_kind(std::string_view member) const {
  if (ABI_INT_SLOT_MEMBERS.contains(member) && !is_enum()) return SlotKind::Int;
  return ABI_TENSOR_SLOT_MEMBERS.contains(member) ? SlotKind::Tensor : SlotKind::Static;
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
  const auto* base = ABI_BASE_OF_TYPE_KIND.find(c10::typeKindToString(t->kind()));
  at.base = base ? std::string(*base) : t->str();
  if (at.base == "NoneType" && (at.optional || at.is_list)) at.base = t->str();
  if (is_torchbind_class(t)) {
    at.is_class = true;
    at.class_type = t;
  }
  return at;
}

}  // namespace externspec
