// The executor's errors, under externspec::Error (Python: externspec.ExternSpecError). The Python
// binding maps each to the class of the same name in externspec.errors, so the C++ and Python
// executors raise the same kinds for the same bad inputs.
#pragma once

#include <externspec/wire.h>

#include <cstddef>
#include <optional>

namespace externspec {

// An error about one node of a spec. `node` is its index, set by the executor that planned it
// (Python: ExternSpecError.node), so that a tool points at `$.nodes[node]` without reading the
// message.
class NodeError : public Error {
 public:
  using Error::Error;
  std::optional<std::size_t> node;
};

// A node does not match the op it names (load time): unknown op, missing, unknown or retyped
// argument, changed returns. `missing_namespace`: the op namespace no loaded library registers,
// where that is why (Python: SpecMismatchError.missing_namespace), so a surface words its own
// advice (the command line's `--load`) without reading the message.
class SpecMismatchError : public NodeError {
 public:
  using NodeError::NodeError;
  std::string missing_namespace;
};

// A call's flat arrays do not match the node's plan (call time), or an int/list return differs
// from what the compiled caller was specialized on.
class CallError : public NodeError {
 public:
  using NodeError::NodeError;
};

// A value or type the extern-kernel ABI cannot carry.
class UnsupportedError : public NodeError {
 public:
  using NodeError::NodeError;
};

// A package (.pt2) cannot be loaded: not a zip archive, no such model, a member whose name escapes
// the package or whose size is over a limit, a library that is not an AOTInductor model. `kind`,
// for a file that is not an AOTInductor package, says what it is (externspec.file_kind's keys:
// "exported_program", "torchscript", "not_zip", ...; Python: PackageError.kind), as data.
class PackageError : public Error {
 public:
  using Error::Error;
  std::string kind;
};

// A compiled model failed while running: its own check on the inputs' values (`torch._check`) or
// a kernel error. what() carries the model's message.
class ModelError : public Error {
 public:
  using Error::Error;
};

}  // namespace externspec
