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
#include <set>
#include <vector>
#include <optional>
#include <variant>
#include <string_view>
#include <stdexcept>
#include <tuple>

#include <externspec/torch/aoti_runner.h>
#include <externspec/torch/errors.h>
#include <externspec/messages.h>
#include <externspec/torch/proxy_executor.h>

#include "aoti_package/cpu_isa.h"
#include "aoti_runner/elf_symbols.h"
#include "executor/torch_types.h"
#include "python/binding.h"

namespace externspec::binding {

py::str text(std::string_view s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "backslashreplace");
  if (o == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

at::Tensor tensor_of(py::handle h, const char* what, std::size_t k) {
  if (!THPVariable_Check(h.ptr()))
    throw py::type_error(std::string(what) + "[" + std::to_string(k) + "] must be a Tensor, got " +
                         std::string(py::str(h.get_type().attr("__name__"))));
  return THPVariable_Unpack(h.ptr());
}

std::string type_name(py::handle h) { return py::str(h.get_type().attr("__name__")); }

CustomObjects custom_objects_of(const py::dict& objects) {
  CustomObjects out;
  for (auto item : objects) {
    auto name = py::cast<std::string>(item.first);
    auto obj = py::cast<torch::jit::Object>(item.second);
    out.emplace(name, c10::IValue(obj._ivalue()));
  }
  return out;
}

// The `call_layout` option by name, as es.ProxyExecutor's `call_layout_option` passes it: "auto" is unset.
std::optional<externspec::CallLayout> call_layout_of(const std::string& name) {
  if (name == "auto") return std::nullopt;
  if (auto layout = externspec::enum_from_string<externspec::CallLayout>(name)) return layout;
  throw std::invalid_argument(
      externspec::message(externspec::Message::CALL_LAYOUT_OPTION_UNKNOWN, {{"value", "'" + name + "'"}}));
}

py::object call_layout_name(std::optional<externspec::CallLayout> layout) {
  if (!layout) return py::none();
  return py::str(std::string(externspec::to_string(*layout)));
}

namespace {

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
  py::class_<externspec::Limits> limits(m, "Limits");
  limits.def(py::init<>());
  for (const auto& [name, field] : kLimitFields) limits.def_readwrite(name, field);
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

// The CPU check's rule (aoti_package/cpu_isa.h) and this machine as it sees it, so that
// tests/aoti/test_cpu_isa.py runs one body over it and Python's externspec.cpu_isa.
void bind_cpu_isa(py::module_& m) {
  using externspec::detail::HostCpu;
  auto host = [](const HostCpu& h) {
    py::object features = py::none();
    if (h.features) features = py::cast(std::vector<std::string>(h.features->begin(), h.features->end()));
    return py::dict(py::arg("machine") = h.machine, py::arg("features") = features, py::arg("unread") = h.unread,
                    py::arg("capability") = h.capability);
  };
  m.def("host_cpu", [host] { return host(externspec::detail::host_cpu()); });
  m.def("cpu_isa_refusal", [](const std::string& machine, const std::string& isa, const std::string& host_machine,
                              std::optional<std::vector<std::string>> features, const std::string& unread,
                              const std::string& capability) {
    HostCpu h{host_machine, std::nullopt, unread, capability};
    if (features) h.features = std::set<std::string>(features->begin(), features->end());
    return std::make_pair(externspec::detail::cpu_isa_refusal(machine, isa, h), externspec::detail::host_isa(h));
  });
}

// A model library's dynamic symbols as the runner reads them (aoti_runner/elf_symbols.h), so that
// tests/aoti/test_elf_symbols.py runs one corpus over it and Python's externspec.elf_symbols.
void bind_elf(py::module_& m) {
  m.def("elf_dynamic_symbols", [](const std::string& path, const std::string& label) {
    const auto symbols = externspec::detail::dynamic_symbols(path, label);
    py::list imported, exported;
    for (const auto& name : symbols.imported) imported.append(text(name));
    for (const auto& name : symbols.exported) exported.append(text(name));
    return py::make_tuple(imported, exported);
  });
}

}  // namespace
}  // namespace externspec::binding

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  using namespace externspec::binding;
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
  bind_messages(m);
  bind_cpu_isa(m);
  bind_elf(m);
  bind_aoti_runner(m);
}
