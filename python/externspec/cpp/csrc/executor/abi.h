// The extern-kernel call ABI, answered from the generated tables (`ABI_*` in externspec.h, from
// the IDL constants in schema/externspec.thrift; python/externspec/abi/__init__.py reads the same
// tables): which Argument members each op-schema type accepts, which take slots in the flat
// arrays, and what a return is written as. This file only decomposes c10 types and looks them up.
#pragma once

#include <ATen/core/jit_type.h>

#include <string>
#include <string_view>
#include <vector>

namespace externspec {

// Which array an input travels in: the int array, the tensor array, or neither (decoded at load).
enum class SlotKind { Int, Tensor, Static };

// One op-schema type, decomposed: `Tensor?[]` is base Tensor, list, optional elements.
struct ArgType {
  std::string base;  // "Tensor", "int", "SymInt", ..., or torch's spelling of any other type
  bool is_list = false;
  bool optional = false;       // `T?` / `T[]?`: None is allowed
  bool elem_optional = false;  // `T?[]`
  bool is_class = false;       // a torchbind class (`__torch__.torch.classes.ns.Foo`)
  c10::TypePtr class_type;     // that class, for the object's type check

  // The type without its outer `?` (the key of ABI_INPUT_MEMBERS), and with it.
  std::string spelling() const;
  std::string str() const { return spelling() + (optional ? "?" : ""); }
  // Members a non-None value may be written as (empty: the ABI cannot carry the type).
  std::vector<std::string_view> members() const;
  bool supported() const { return !members().empty(); }
  bool accepts(std::string_view member) const;
  bool is_enum() const;
  // The output member of a return of this type ("" if the ABI cannot return it).
  std::string_view return_member() const;
  // The array an input of this type written as `member` travels in.
  SlotKind slot_kind(std::string_view member) const;
};

// Decompose `schema_arg.real_type()` (which keeps SymInt and ScalarType apart from int).
ArgType arg_type(const c10::TypePtr& real_type);

}  // namespace externspec
