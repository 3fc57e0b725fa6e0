// The Python binding of the C++ executor and runner (imported as externspec.cpp's extension).
//
// Errors keep their kind across the boundary: externspec::DecodeError/VersionError and the
// executor's SpecMismatchError/CallError/UnsupportedError become the Python classes of the same
// names in externspec.errors (registered by externspec.cpp at import), so callers catch
// es.ExternSpecError for both executors.
//
// C++ text is bytes: a message names package members, paths and the model's own words, none of
// which need be UTF-8. Every string that crosses into Python goes through `text` (invalid bytes
// become `\xNN`), so a bad byte never turns an error into UnicodeDecodeError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/jit/api/object.h>
#include <torch/headeronly/version.h>

#include <map>
#include <optional>
#include <variant>
#include <string_view>
#include <stdexcept>
#include <tuple>

#include <externspec/torch/aoti_runner.h>
#include <externspec/torch/errors.h>
#include <externspec/torch/messages.h>
#include <externspec/torch/proxy_executor.h>

#include "aoti_package/zip_reader.h"
#include "executor/torch_types.h"

namespace py = pybind11;
using externspec::AOTIRunner;
using externspec::CallError;
using externspec::CustomObjects;
using externspec::ProxyExecutor;

namespace {

py::str text(std::string_view s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "backslashreplace");
  if (o == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

bool is_utf8(std::string_view s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), nullptr);
  if (o == nullptr) {
    PyErr_Clear();
    return false;
  }
  Py_DECREF(o);
  return true;
}

// Python exception classes and the problem-record factory, set by `_register_errors` (externspec.errors).
// Handles that own a reference never given back: a static py::object would drop its reference in
// the C++ exit handlers, after Python has finalized (a function object freed there aborted the
// process: "PyThreadState_Get ... finalizing").
py::handle decode_error, version_error, spec_mismatch_error, call_error, unsupported_error, package_error, model_error,
    problem_record;

at::Tensor tensor_of(py::handle h, const char* what, std::size_t k) {
  if (!THPVariable_Check(h.ptr()))
    throw py::type_error(std::string(what) + "[" + std::to_string(k) + "] must be a Tensor, got " +
                         std::string(py::str(h.get_type().attr("__name__"))));
  return THPVariable_Unpack(h.ptr());
}

CustomObjects custom_objects_of(const py::dict& objects) {
  CustomObjects out;
  for (auto item : objects) {
    auto name = py::cast<std::string>(item.first);
    auto obj = py::cast<torch::jit::Object>(item.second);
    out.emplace(name, c10::IValue(obj._ivalue()));
  }
  return out;
}

std::string type_name(py::handle h) { return py::str(h.get_type().attr("__name__")); }

// The argument (or int return) that array slot `k` feeds, for error messages.
std::string slot_owner(const externspec::NodePlan& plan, bool tensor, std::size_t k) {
  for (const auto& f : plan.fills) {
    bool reads_tensors = f.kind != externspec::FillKind::Int && f.kind != externspec::FillKind::Ints &&
                         f.kind != externspec::FillKind::ScalarInts;
    if (reads_tensors == tensor && k >= f.start && k < f.start + f.count) return externspec::message(externspec::Message::SLOT_OF_ARGUMENT, {{"name", f.arg_name}});
  }
  for (std::size_t i = 0; i < plan.outputs.size(); ++i)
    if (!tensor && plan.outputs[i].kind == externspec::OutKind::Int && plan.outputs[i].slot == k)
      return externspec::message(externspec::Message::SLOT_OF_INT_RETURN, {{"index", std::to_string(i)}});
  return "slot";
}

// The rule of abi/proxy_executor.py's _wrong_element, with its messages (messages.def): an int slot
// takes an int in int64 range (anything with __index__, not a bool or a float).
int64_t int_slot(const externspec::NodePlan& plan, py::handle v, std::size_t k) {
  auto wrong = [&](externspec::Message m) {
    return CallError(externspec::message(m, {{"label", plan.label}, {"slot", std::to_string(k)},
                                             {"owner", slot_owner(plan, false, k)}, {"type", type_name(v)}}));
  };
  py::object number;
  if (PyBool_Check(v.ptr()) || !PyIndex_Check(v.ptr())) throw wrong(externspec::Message::INT_SLOT_NOT_AN_INT);
  number = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!number) {
    PyErr_Clear();
    throw wrong(externspec::Message::INT_SLOT_NOT_AN_INT);
  }
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
  if (overflow) throw wrong(externspec::Message::INT_SLOT_NOT_INT64);
  return value;
}

CallError index_out_of_range(py::handle index, std::size_t count) {
  return CallError(externspec::message(externspec::Message::NODE_INDEX_OUT_OF_RANGE,
                                       {{"index", std::string(py::repr(index))}, {"count", std::to_string(count)}}));
}

void call_function(ProxyExecutor& ex, py::handle index, py::handle int_args, py::handle tensor_arg) {
  long long i = 0;
  if (!PyLong_Check(index.ptr()) || PyBool_Check(index.ptr())) throw index_out_of_range(index, ex.size());
  int overflow = 0;
  i = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow || i < 0 || static_cast<std::size_t>(i) >= ex.size()) throw index_out_of_range(index, ex.size());
  if (!PyList_Check(tensor_arg.ptr()))
    throw CallError(externspec::message(externspec::Message::TENSOR_ARGS_NOT_A_LIST,
                                        {{"label", ex.plan(static_cast<std::size_t>(i)).label},
                                         {"type", type_name(tensor_arg)}}));
  auto tensor_args = py::reinterpret_borrow<py::list>(tensor_arg);
  py::sequence int_seq = py::reinterpret_borrow<py::sequence>(int_args);
  std::size_t n = tensor_args.size();
  const auto& plan = ex.plan_for_call(static_cast<int>(i), static_cast<std::int64_t>(int_seq.size()),
                                      static_cast<std::int64_t>(n));
  std::vector<int64_t> ints(int_seq.size());
  for (std::size_t k = 0; k < ints.size(); ++k) ints[k] = int_slot(plan, int_seq[k], k);
  // Input slots must hold tensors; output slots are overwritten, whatever they hold.
  std::vector<at::Tensor> slots(n);
  for (std::size_t k = 0; k < static_cast<std::size_t>(plan.num_input_tensors); ++k) {
    py::handle h = tensor_args[k];
    if (!THPVariable_Check(h.ptr()))
      throw CallError(externspec::message(externspec::Message::TENSOR_SLOT_NOT_A_TENSOR,
                                          {{"label", plan.label}, {"slot", std::to_string(k)},
                                           {"owner", slot_owner(plan, true, k)}, {"type", type_name(h)}}));
    slots[k] = THPVariable_Unpack(h.ptr());
  }
  std::vector<AtenTensorHandle> handles(n);
  for (std::size_t k = 0; k < n; ++k) handles[k] = reinterpret_cast<AtenTensorHandle>(&slots[k]);
  {
    py::gil_scoped_release release;
    ex.call_function(static_cast<int>(i), static_cast<int>(ints.size()), ints.data(), static_cast<int>(n),
                     handles.data());
  }
  // Output slots follow the inputs: store what the executor wrote into them.
  for (std::size_t k = static_cast<std::size_t>(plan.num_input_tensors); k < n; ++k)
    if (slots[k].defined()) tensor_args[k] = py::reinterpret_steal<py::object>(THPVariable_Wrap(slots[k]));
}

// The `call_layout` option by name, as es.ProxyExecutor's `call_layout_option` passes it: "auto" is unset.
std::optional<externspec::CallLayout> call_layout_of(const std::string& name) {
  if (name == "auto") return std::nullopt;
  if (auto layout = externspec::enum_from_string<externspec::CallLayout>(name)) return layout;
  throw std::invalid_argument("call_layout must be \"auto\", \"NODE_ARGUMENTS\" or \"OMITTED_DEFAULTS_PASSED\", got '" +
                              name + "'");
}

py::object call_layout_name(std::optional<externspec::CallLayout> layout) {
  if (!layout) return py::none();
  return py::str(std::string(externspec::to_string(*layout)));
}

// The model's inputs from a list or tuple (or any sequence), read without copying the sequence.
std::vector<at::Tensor> tensors_of(py::handle inputs) {
  auto fast = py::reinterpret_steal<py::object>(PySequence_Fast(inputs.ptr(), "inputs must be a sequence of tensors"));
  if (!fast) throw py::error_already_set();
  const auto n = static_cast<std::size_t>(PySequence_Fast_GET_SIZE(fast.ptr()));
  PyObject** items = PySequence_Fast_ITEMS(fast.ptr());
  std::vector<at::Tensor> out;
  out.reserve(n);
  for (std::size_t k = 0; k < n; ++k) out.push_back(tensor_of(items[k], "inputs", k));
  return out;
}

py::list wrap(std::vector<at::Tensor> ts) {
  py::list out(ts.size());
  for (std::size_t k = 0; k < ts.size(); ++k) {
    PyObject* t = THPVariable_Wrap(std::move(ts[k]));
    if (t == nullptr) throw py::error_already_set();
    PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(k), t);  // steals the reference
  }
  return out;
}

// `stream`: a cudaStream_t as an integer (torch.cuda.Stream.cuda_stream), 0 for the current stream.
py::list run_flat(AOTIRunner& r, py::handle inputs, std::uintptr_t stream) {
  auto tensors = tensors_of(inputs);
  std::vector<at::Tensor> out;
  {
    py::gil_scoped_release release;
    out = r.run(tensors, reinterpret_cast<void*>(stream));
  }
  return wrap(std::move(out));
}

// A proxy executor that hands each call to a Python `call_function(index, int_args, tensor_args)`
// (es.ProxyExecutor's): the compiled wrapper then drives the Python executor with exactly the
// arrays it passes, dynamic sizes included. Output slots arrive as None; whatever the callee
// stores into a slot is written back to the wrapper's handle.
class PythonExecutor : public torch::aot_inductor::ProxyExecutor {
 public:
  explicit PythonExecutor(py::object call) : call_(std::move(call)) {}

  void call_function(int index, int num_ints, int64_t* ints, int num_tensors, AtenTensorHandle* tensors) override {
    py::gil_scoped_acquire gil;
    try {
      py::list int_args;
      for (int k = 0; k < num_ints; ++k) int_args.append(ints[k]);
      py::list tensor_args;
      for (int k = 0; k < num_tensors; ++k) {
        const auto* t = reinterpret_cast<const at::Tensor*>(tensors[k]);
        if (t != nullptr && t->defined()) tensor_args.append(py::reinterpret_steal<py::object>(THPVariable_Wrap(*t)));
        else tensor_args.append(py::none());
      }
      call_(index, int_args, tensor_args);
      for (int k = 0; k < num_tensors; ++k) {
        auto* slot = reinterpret_cast<at::Tensor*>(tensors[k]);
        py::object v = tensor_args[static_cast<std::size_t>(k)];
        if (slot == nullptr || v.is_none()) continue;
        at::Tensor t = tensor_of(v, "tensor_args", static_cast<std::size_t>(k));
        if (!slot->is_same(t)) *slot = std::move(t);
      }
    } catch (py::error_already_set& e) {
      // The first failure: a model that ignores the status (torch 2.11, 2.12) makes more calls after it.
      if (!error_) error_ = std::make_unique<py::error_already_set>(std::move(e));
      throw std::runtime_error("the Python executor raised");
    }
  }

  // The Python exception of the failed call, if any (raised again in the caller's frame).
  std::unique_ptr<py::error_already_set> error_;

 private:
  py::object call_;
};

py::list run_with_python(AOTIRunner& r, py::object call, py::args args) {
  auto inputs = tensors_of(args);
  PythonExecutor executor(std::move(call));
  std::vector<at::Tensor> out;
  try {
    py::gil_scoped_release release;
    out = r.run_with(inputs, &executor);
  } catch (const std::exception&) {
    if (executor.error_) throw std::move(*executor.error_);
    throw;
  }
  // A model whose wrapper ignores the executor's status (torch 2.11, 2.12) runs on after a failed call.
  if (executor.error_) throw std::move(*executor.error_);
  return wrap(std::move(out));
}

// Collects the TORCH_WARNs of a load made without the GIL and issues them as Python warnings once
// it is held again, their text through `text`: torch::PyWarningHandler decodes a message strictly,
// so a member name that is not UTF-8 turned the warning into UnicodeDecodeError.
class LoadWarnings : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override {
    warnings_.emplace_back(std::holds_alternative<c10::DeprecationWarning>(warning.type()), warning.msg());
  }
  // Raises the Python error when a warning filter turns one into an exception.
  void issue() {
    auto warn = py::module_::import("warnings").attr("warn");
    auto pending = std::move(warnings_);
    warnings_.clear();
    for (const auto& [deprecation, message] : pending)  // error_already_set when a filter raises
      warn(text(message), py::handle(deprecation ? PyExc_DeprecationWarning : PyExc_UserWarning), 2);
  }
  // On the way out of a failed load: the load's own error wins over a warning made an exception.
  void issue_before_error() noexcept {
    try {
      issue();
    } catch (...) {
      PyErr_Clear();
    }
  }

 private:
  std::vector<std::pair<bool, std::string>> warnings_;
};

void raise_as(py::handle cls, const char* message) {
  PyErr_SetObject(cls.ptr(), cls(text(message)).ptr());
}

py::object none_if_empty(const std::string& s) { return s.empty() ? py::object(py::none()) : py::object(text(s)); }

// An executor error as its Python class, with the node it is about (ExternSpecError.node).
void raise_node_error(py::handle cls, const externspec::NodeError& e) {
  py::object node = e.node ? py::object(py::int_(*e.node)) : py::object(py::none());
  PyErr_SetObject(cls.ptr(), cls(text(e.what()), py::arg("node") = node).ptr());
}

// Raises the Python error of a C++ exception (pybind's exception translator): externspec's
// errors as the class of the same name in externspec.errors, their records and node as data.
void translate_exception(std::exception_ptr p) {
  if (!p || !decode_error) return;
  try {
    std::rethrow_exception(p);
  } catch (const externspec::DecodeError& e) {
    // The records cross as records: kind, path, message and key, as the decoder made them.
    py::list errors;
    for (const auto& d : e.errors())
      errors.append(problem_record(d.kind, text(d.path), text(d.message), none_if_empty(d.key)));
    PyErr_SetObject(decode_error.ptr(), decode_error(errors, py::arg("source") = none_if_empty(e.source()),
                                                     py::arg("truncated") = e.truncated())
                                            .ptr());
  } catch (const externspec::VersionError& e) {
    PyErr_SetObject(version_error.ptr(), version_error(text(e.message()), py::arg("path") = text(e.path()),
                                                       py::arg("key") = none_if_empty(e.key()))
                                             .ptr());
  } catch (const externspec::SpecMismatchError& e) {
    py::object node = e.node ? py::object(py::int_(*e.node)) : py::object(py::none());
    py::object error = spec_mismatch_error(text(e.what()), py::arg("node") = node);
    if (!e.missing_namespace.empty()) error.attr("missing_namespace") = text(e.missing_namespace);  // data
    PyErr_SetObject(spec_mismatch_error.ptr(), error.ptr());
  } catch (const externspec::CallError& e) {
    raise_node_error(call_error, e);
  } catch (const externspec::UnsupportedError& e) {
    raise_node_error(unsupported_error, e);
  } catch (const externspec::PackageError& e) {
    if (e.kind.empty()) {
      raise_as(package_error, e.what());
    } else {  // what the file is crosses as data (PackageError.kind)
      PyErr_SetObject(package_error.ptr(), package_error(text(e.what()), py::arg("kind") = e.kind).ptr());
    }
  } catch (const externspec::ModelError& e) {
    raise_as(model_error, e.what());
  } catch (const std::invalid_argument& e) {
    // Any other exception (torch's c10::Error included) keeps pybind's translation unless its
    // message is not UTF-8, which pybind would turn into UnicodeDecodeError.
    if (is_utf8(e.what())) throw;
    raise_as(PyExc_ValueError, e.what());
  } catch (const std::exception& e) {
    if (is_utf8(e.what())) throw;
    raise_as(PyExc_RuntimeError, e.what());
  }
}

// externspec.errors' classes, registered by es.cpp on import, and the translator that raises them.
void bind_errors(py::module_& m) {
  m.def("_register_errors", [](py::object decode, py::object version, py::object mismatch, py::object call,
                               py::object unsupported, py::object package, py::object model, py::object problem) {
    problem_record = problem.release();
    decode_error = decode.release();
    version_error = version.release();
    spec_mismatch_error = mismatch.release();
    call_error = call.release();
    unsupported_error = unsupported.release();
    package_error = package.release();
    model_error = model.release();
  });
  py::register_exception_translator(&translate_exception);
}

// externspec::Limits, field by field: es.cpp builds one from Python's externspec.Limits at each load.
void bind_limits(py::module_& m) {
  py::class_<externspec::Limits>(m, "Limits")
      .def(py::init<>())
      .def_readwrite("max_json_bytes", &externspec::Limits::max_json_bytes)
      .def_readwrite("max_source_bytes", &externspec::Limits::max_source_bytes)
      .def_readwrite("max_extracted_bytes", &externspec::Limits::max_extracted_bytes)
      .def_readwrite("max_custom_object_bytes", &externspec::Limits::max_custom_object_bytes);
}

void bind_proxy_executor(py::module_& m) {
  py::class_<ProxyExecutor>(m, "ProxyExecutor")
      .def(py::init([](const std::string& json, const py::dict& objects, std::vector<std::string> allow_ops,
                       const std::optional<std::string>& device, const std::string& call_layout,
                       const std::optional<std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>>& lengths,
                       const externspec::Limits& limits) {
             auto objs = custom_objects_of(objects);
             std::optional<c10::Device> runtime;
             if (device) runtime = externspec::parse_device(*device);
             std::optional<std::vector<externspec::CallLengths>> calls;
             if (lengths) {
               calls.emplace();
               for (const auto& [index, ints, tensors] : *lengths) calls->push_back({index, ints, tensors});
             }
             auto layout = call_layout_of(call_layout);
             py::gil_scoped_release release;
             return std::make_unique<ProxyExecutor>(json, std::move(objs), std::move(allow_ops), runtime, layout, calls,
                                                    limits);
           }),
           py::arg("json"), py::arg("custom_objects") = py::dict(), py::arg("allow_ops") = std::vector<std::string>{},
           py::arg("device") = py::none(), py::arg("call_layout") = "auto", py::arg("call_lengths") = py::none(),
           py::arg("limits") = externspec::Limits())
      .def("__len__", &ProxyExecutor::size)
      .def_property_readonly("call_layout", [](const ProxyExecutor& ex) { return call_layout_name(ex.call_layout()); })
      .def("call_function", &call_function, py::arg("index"), py::arg("int_args"), py::arg("tensor_args"))
      .def("num_slots", [](const ProxyExecutor& ex, std::size_t index) {
        const auto& p = ex.plan(index);
        return py::make_tuple(p.num_input_tensors, p.num_tensors, p.num_input_ints, p.num_ints);
      });
}

// Message `name` of messages.def rendered by C++ with `params` (tests/cpp/test_messages.py compares
// it with Python's rendering of every message).
void bind_messages(py::module_& m) {
  m.def("render_message", [](const std::string& name, const std::map<std::string, std::string>& params) {
    return externspec::render_message(externspec::message_text(name), params);
  });
}

void bind_package_members(py::module_& m) {
  // The members of a package as the runner's checks read its zip directory: {name inside the top
  // folder (bytes): (size, CRC-32)}, or PackageError.
  m.def("package_members", [](const std::string& path) {
    py::dict out;
    std::optional<externspec::detail::Package> package;
    {
      py::gil_scoped_release release;
      package.emplace(path);
    }
    for (const auto& [name, record] : package->members()) out[py::bytes(name)] = py::make_tuple(record.size, record.crc);
    return out;
  }, py::arg("path"));
}

// es.cpp.AOTIRunner's constructor: the package loaded with the GIL released, its load's TORCH_WARNs
// raised as Python warnings.
std::unique_ptr<AOTIRunner> load_runner(const std::string& package_path, const std::string& model_name,
                                        const std::string& device, const py::dict& objects,
                                        const externspec::Limits& limits, bool require_input_records, std::size_t num_models,
                                        std::vector<std::string> op_libraries, bool load_custom_objects,
                                        const std::string& call_layout) {
  externspec::AOTIRunnerOptions options;
  options.model_name = model_name;
  options.device = device;
  options.custom_objects = custom_objects_of(objects);
  options.limits = limits;
  options.require_input_records = require_input_records;
  options.num_models = num_models;
  options.op_libraries = std::move(op_libraries);
  options.load_custom_objects = load_custom_objects;
  options.call_layout = call_layout_of(call_layout);
  LoadWarnings warnings;  // the load's TORCH_WARNs become Python warnings
  std::unique_ptr<AOTIRunner> runner;
  try {
    c10::WarningUtils::WarningHandlerGuard guard(&warnings);
    py::gil_scoped_release release;
    runner = std::make_unique<AOTIRunner>(package_path, std::move(options));
  } catch (...) {
    warnings.issue_before_error();
    throw;
  }
  warnings.issue();
  return runner;
}

void bind_aoti_runner(py::module_& m) {
  py::class_<AOTIRunner>(m, "AOTIRunner")
      .def(py::init(&load_runner),
           py::arg("package_path"), py::arg("model_name"), py::arg("device"), py::arg("custom_objects"),
           py::arg("limits"), py::arg("require_input_records"),
           py::arg("num_models"), py::arg("op_libraries"), py::arg("load_custom_objects"), py::arg("call_layout"))
      .def("__call__", [](AOTIRunner& r, py::args args) { return run_flat(r, args, 0); })
      .def("run_flat", &run_flat, py::arg("inputs"), py::arg("stream") = 0)
      .def_property_readonly("device", [](const AOTIRunner& r) { return r.device().str(); })
      .def("run_with_python", &run_with_python, py::arg("call_function"))
      .def_property_readonly("num_inputs", &AOTIRunner::num_inputs)
      .def_property_readonly("num_models", &AOTIRunner::num_models)
      .def_property_readonly("num_outputs", &AOTIRunner::num_outputs)
      .def_property_readonly("in_spec", [](const AOTIRunner& r) { return text(r.in_spec()); })
      .def_property_readonly("out_spec", [](const AOTIRunner& r) { return text(r.out_spec()); })
      .def_property_readonly("metadata", [](const AOTIRunner& r) { return text(r.metadata()); })
      .def_property_readonly("call_layout", [](const AOTIRunner& r) { return call_layout_name(r.executor().call_layout()); });
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "externspec's C++ proxy executor and AOTInductor runner";
  // The torch this was compiled against: es.cpp refuses a prebuilt binding under another release.
  m.attr("torch_version") = TORCH_VERSION;
  // Whether the CUDA path (AOTIRunner on "cuda" devices, streams) was compiled in.
#ifdef USE_CUDA
  m.attr("with_cuda") = true;
#else
  m.attr("with_cuda") = false;
#endif
  bind_errors(m);
  bind_limits(m);
  bind_proxy_executor(m);
  bind_package_members(m);
  bind_messages(m);
  bind_aoti_runner(m);
}
