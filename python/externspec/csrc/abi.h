// The extern-kernel call ABI as data, the C++ twin of python/externspec/abi.py: which Argument
// members each op-schema type accepts, and which members take slots in the flat arrays.
// Both executors judge a node by these tables, so they accept and reject the same specs.
#pragma once

#include <ATen/core/jit_type.h>

#include <string>
#include <string_view>
#include <vector>

namespace externspec {

// One op-schema type, decomposed: `Tensor?[]` is base Tensor, list, optional elements.
struct ArgType {
  std::string base;  // "Tensor", "int", "SymInt", ..., or torch's spelling of any other type
  bool is_list = false;
  bool optional = false;       // `T?` / `T[]?`: None is allowed
  bool elem_optional = false;  // `T?[]`
  bool is_class = false;       // a torchbind class (`__torch__.torch.classes.ns.Foo`)
  c10::TypePtr class_type;     // that class, for the object's type check

  std::string str() const;
  // Members a non-None value may be written as (empty: the ABI cannot carry the type).
  std::vector<std::string_view> members() const;
  bool supported() const { return !members().empty(); }
  bool accepts(std::string_view member) const;
  bool is_enum() const { return !is_list && (base == "ScalarType" || base == "Layout" || base == "MemoryFormat"); }
  // The output member of a return of this type ("" if the ABI cannot return it).
  std::string_view return_member() const;
};

// Decompose `schema_arg.real_type()` (which keeps SymInt and ScalarType apart from int).
ArgType arg_type(const c10::TypePtr& real_type);

}  // namespace externspec
