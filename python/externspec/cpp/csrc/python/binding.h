// What the binding's two files share (module.cpp: errors, limits, the executor; aoti_runner.cpp:
// the runner, its options, package members).
#pragma once

#include <pybind11/pybind11.h>

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <externspec/torch/aoti_runner.h>
#include <externspec/torch/limits.h>
#include <externspec/torch/proxy_executor.h>

namespace externspec::binding {

namespace py = pybind11;

// C++ text as Python text: invalid UTF-8 bytes become `\xNN` (member names, paths and a model's
// words need not be UTF-8), so a bad byte never turns an error into UnicodeDecodeError.
py::str text(std::string_view s);

// The tensor `h` is; TypeError naming `what[k]` otherwise.
at::Tensor tensor_of(py::handle h, const char* what, std::size_t k);

// The name of `h`'s type, for messages.
std::string type_name(py::handle h);

// Torchbind objects by name from a dict of torch.ScriptObject.
CustomObjects custom_objects_of(const py::dict& objects);

// The `call_layout` option by name ("auto": unset); std::invalid_argument for another name.
std::optional<CallLayout> call_layout_of(const std::string& name);
py::object call_layout_name(std::optional<CallLayout> layout);

// externspec::Limits' fields by name (es.Limits' names), for the binding of both.
inline constexpr std::pair<const char*, std::uint64_t Limits::*> kLimitFields[] = {
    {"max_json_bytes", &Limits::max_json_bytes},
    {"max_source_bytes", &Limits::max_source_bytes},
    {"max_extracted_bytes", &Limits::max_extracted_bytes},
    {"max_custom_object_bytes", &Limits::max_custom_object_bytes},
};

// es.cpp.AOTIRunnerOptions, es.cpp.AOTIRunner and es.cpp.package_members.
void bind_aoti_runner(py::module_& m);

}  // namespace externspec::binding
