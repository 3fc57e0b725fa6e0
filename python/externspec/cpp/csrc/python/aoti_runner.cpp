// es.cpp's runner: externspec::AOTIRunner and its options (AOTIRunnerOptions, one bound class whose
// fields Python sets by keyword), the package from a path or from bytes, and package_members.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/jit/api/object.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <externspec/torch/aoti_runner.h>
#include <externspec/messages.h>
#include <externspec/torch/errors.h>

#include "aoti_package/file_kind.h"
#include "aoti_package/zip_reader.h"
#include "python/binding.h"

namespace externspec::binding {
namespace {

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

// `stream`: None for the device's current stream, else a torch.cuda.Stream of the runner's device.
void* stream_handle(const AOTIRunner& r, py::handle stream) {
  if (stream.is_none()) return nullptr;
  if (!py::isinstance(stream, py::module_::import("torch.cuda").attr("Stream")))
    throw py::type_error("stream must be a torch.cuda.Stream, got " +
                         std::string(py::str(py::type::handle_of(stream).attr("__name__"))));
  const std::string device = py::str(stream.attr("device"));
  if (device != r.device().str())
    throw externspec::CallError("the stream is on " + device + ", the model runs on " + r.device().str());
  return reinterpret_cast<void*>(stream.attr("cuda_stream").cast<std::uintptr_t>());
}

// es.cpp.AOTIRunner's C++ object: the runner until close(). A call takes its own reference while the
// GIL is held, so close() (GIL held too) stops every later call, whichever way the method was looked
// up (`run = runner.run_flat` kept in a hot loop), and the model is released once the calls in flight,
// which hold theirs, end.
class BoundRunner {
 public:
  BoundRunner(std::shared_ptr<AOTIRunner> runner, std::string label)
      : runner_(std::move(runner)), label_(std::move(label)) {}

  // The runner, for one call; CallError once closed.
  std::shared_ptr<AOTIRunner> runner() const {
    if (!runner_) throw externspec::CallError(message(Message::RUNNER_CLOSED, {{"label", label_}}));
    return runner_;
  }

  void close() { runner_.reset(); }

 private:
  std::shared_ptr<AOTIRunner> runner_;
  std::string label_;
};

py::list run_flat(const BoundRunner& bound, py::handle inputs, py::handle stream) {
  const std::shared_ptr<AOTIRunner> r = bound.runner();
  auto tensors = tensors_of(inputs);
  void* handle = stream_handle(*r, stream);
  std::vector<at::Tensor> out;
  {
    py::gil_scoped_release release;
    out = r->run(tensors, handle);
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

py::list run_with_python(const BoundRunner& bound, py::object call, py::args args) {
  const std::shared_ptr<AOTIRunner> r = bound.runner();
  auto inputs = tensors_of(args);
  PythonExecutor executor(std::move(call));
  std::vector<at::Tensor> out;
  try {
    py::gil_scoped_release release;
    out = r->run_with(inputs, &executor);
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

// One option of AOTIRunnerOptions as Python reads and sets it.
struct Option {
  const char* name;
  py::object (*get)(const AOTIRunnerOptions&);
  void (*set)(AOTIRunnerOptions&, py::handle);
};

void set_num_models(AOTIRunnerOptions& o, py::handle v) {
  if (PyBool_Check(v.ptr()) || !PyLong_Check(v.ptr()))
    throw py::type_error("num_models must be an int, got " + type_name(v));
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  AOTIRunnerOptions::check_num_models(overflow ? std::numeric_limits<std::int64_t>::max() : n);
  o.num_models = static_cast<std::size_t>(n);
}

void set_op_libraries(AOTIRunnerOptions& o, py::handle v) {
  if (py::isinstance<py::str>(v) || py::isinstance<py::bytes>(v) || py::hasattr(v, "__fspath__"))
    throw py::type_error("op_libraries takes a list of library paths, got one path");
  auto fspath = py::module_::import("os").attr("fspath");
  std::vector<std::string> paths;
  for (py::handle p : py::iter(v)) paths.push_back(py::cast<std::string>(fspath(p)));
  o.op_libraries = std::move(paths);
}

// An es.Limits, or the binding's Limits: read field by field.
void set_limits(AOTIRunnerOptions& o, py::handle v) {
  for (const auto& [name, field] : kLimitFields) o.limits.*field = py::cast<std::uint64_t>(v.attr(name));
}

// "auto", a layout's name, or a CallLayout member (its name).
void set_call_layout(AOTIRunnerOptions& o, py::handle v) {
  o.call_layout = call_layout_of(py::isinstance<py::str>(v) ? py::cast<std::string>(v)
                                                             : py::cast<std::string>(v.attr("name")));
}

py::object custom_objects_dict(const AOTIRunnerOptions& o) {
  py::dict out;
  for (const auto& [name, value] : o.custom_objects) out[text(name)] = py::cast(torch::jit::Object(value.toObject()));
  return out;
}

const Option kOptions[] = {
    {"model_name", [](const AOTIRunnerOptions& o) -> py::object { return text(o.model_name); },
     [](AOTIRunnerOptions& o, py::handle v) { o.model_name = py::cast<std::string>(v); }},
    {"device", [](const AOTIRunnerOptions& o) -> py::object { return text(o.device); },
     [](AOTIRunnerOptions& o, py::handle v) { o.device = py::cast<std::string>(v); }},
    {"custom_objects", &custom_objects_dict,
     [](AOTIRunnerOptions& o, py::handle v) { o.custom_objects = custom_objects_of(py::cast<py::dict>(v)); }},
    {"num_models", [](const AOTIRunnerOptions& o) -> py::object { return py::int_(o.num_models); }, &set_num_models},
    {"op_libraries", [](const AOTIRunnerOptions& o) -> py::object { return py::cast(o.op_libraries); },
     &set_op_libraries},
    {"load_custom_objects", [](const AOTIRunnerOptions& o) -> py::object { return py::bool_(o.load_custom_objects); },
     [](AOTIRunnerOptions& o, py::handle v) { o.load_custom_objects = py::cast<bool>(v); }},
    {"limits", [](const AOTIRunnerOptions& o) -> py::object { return py::cast(o.limits); }, &set_limits},
    {"require_input_records",
     [](const AOTIRunnerOptions& o) -> py::object { return py::bool_(o.require_input_records); },
     [](AOTIRunnerOptions& o, py::handle v) { o.require_input_records = py::cast<bool>(v); }},
    {"call_layout",
     [](const AOTIRunnerOptions& o) -> py::object {
       return o.call_layout ? call_layout_name(o.call_layout) : py::str("auto");
     },
     &set_call_layout},
};

// AOTIRunnerOptions from keywords (`AOTIRunnerOptions(num_models=2)`); TypeError for a name that is not an option.
AOTIRunnerOptions options_of(const py::kwargs& given) {
  AOTIRunnerOptions options;
  for (const auto& [key, value] : given) {
    const std::string name = py::cast<std::string>(key);
    const auto* option = std::find_if(std::begin(kOptions), std::end(kOptions),
                                      [&](const Option& o) { return name == o.name; });
    if (option == std::end(kOptions)) {
      std::string known;
      for (const Option& o : kOptions) known += (known.empty() ? "" : ", ") + std::string(o.name);
      throw py::type_error("AOTIRunner has no option `" + name + "` (its options: " + known + ")");
    }
    option->set(options, value);
  }
  return options;
}

void bind_options(py::module_& m) {
  py::class_<AOTIRunnerOptions> options(m, "AOTIRunnerOptions");
  options.def(py::init(&options_of));
  for (const Option& o : kOptions)
    options.def_property(o.name, o.get, [set = o.set](AOTIRunnerOptions& self, py::handle v) { set(self, v); });
}

// A package given as bytes: a `bytes` object is read in place (immutable while the load runs);
// any other buffer (bytearray, memoryview, numpy) is copied first, as another thread could change
// it between the checks and the reads.
class HeldBytes {
 public:
  explicit HeldBytes(py::handle v) {
    if (PyBytes_Check(v.ptr())) {
      object_ = py::reinterpret_borrow<py::bytes>(v);
      view_ = std::string_view(PyBytes_AS_STRING(v.ptr()), static_cast<std::size_t>(PyBytes_GET_SIZE(v.ptr())));
      return;
    }
    py::buffer_info info = py::reinterpret_borrow<py::buffer>(v).request();
    if (info.ndim != 1 || info.itemsize != 1 || info.strides[0] != 1)
      throw py::type_error("a package's bytes must be a contiguous buffer of bytes");
    copy_.assign(static_cast<const char*>(info.ptr), static_cast<std::size_t>(info.size));
    view_ = copy_;
  }
  std::string_view view() const { return view_; }

 private:
  py::object object_;
  std::string copy_;
  std::string_view view_;
};

// The members of a package (a path, or its bytes) as the runner's checks read its zip directory:
// {name inside the top folder (bytes): (size, CRC-32)}, or PackageError.
void bind_package_members(py::module_& m) {
  m.def("package_members", [](py::handle package) {
    py::dict out;
    std::optional<detail::ZipArchive> zip;
    std::optional<HeldBytes> bytes;
    if (py::isinstance<py::str>(package)) {
      const auto path = py::cast<std::string>(package);
      py::gil_scoped_release release;
      zip.emplace(path);
      detail::open_archive(*zip);
    } else {
      bytes.emplace(package);
      py::gil_scoped_release release;
      zip.emplace(bytes->view(), PackageBytes{}.name);
      detail::open_archive(*zip);
    }
    for (const auto& [name, record] : zip->members()) out[py::bytes(name)] = py::make_tuple(record.size, record.crc);
    return out;
  }, py::arg("package"));
}

// es.cpp.AOTIRunner's constructor: the package (a path, or bytes) loaded with the GIL released,
// its load's TORCH_WARNs raised as Python warnings.
std::unique_ptr<BoundRunner> load_runner(py::handle package, AOTIRunnerOptions options) {
  std::optional<HeldBytes> bytes;
  std::string path;
  if (py::isinstance<py::str>(package)) path = py::cast<std::string>(package);
  else bytes.emplace(package);
  LoadWarnings warnings;  // the load's TORCH_WARNs become Python warnings
  std::shared_ptr<AOTIRunner> runner;
  try {
    c10::WarningUtils::WarningHandlerGuard guard(&warnings);
    py::gil_scoped_release release;
    runner = bytes ? std::make_shared<AOTIRunner>(PackageBytes{bytes->view()}, std::move(options))
                   : std::make_shared<AOTIRunner>(path, std::move(options));
  } catch (...) {
    warnings.issue_before_error();
    throw;
  }
  warnings.issue();
  return std::make_unique<BoundRunner>(std::move(runner), bytes ? "<package bytes>" : path);
}

}  // namespace

void bind_aoti_runner(py::module_& m) {
  bind_options(m);
  bind_package_members(m);
  py::class_<BoundRunner>(m, "AOTIRunner")
      .def(py::init(&load_runner), py::arg("package"), py::arg("options"))
      .def("__call__", [](const BoundRunner& r, py::args args) { return run_flat(r, args, py::none()); })
      .def("run_flat", &run_flat, py::arg("inputs"), py::kw_only(), py::arg("stream") = py::none())
      .def("run_with_python", &run_with_python, py::arg("call_function"))
      .def("close", &BoundRunner::close)
      .def_property_readonly("device", [](const BoundRunner& r) { return r.runner()->device().str(); })
      .def_property_readonly("num_inputs", [](const BoundRunner& r) { return r.runner()->num_inputs(); })
      .def_property_readonly("num_models", [](const BoundRunner& r) { return r.runner()->num_models(); })
      .def_property_readonly("num_outputs", [](const BoundRunner& r) { return r.runner()->num_outputs(); })
      .def_property_readonly("in_spec", [](const BoundRunner& r) { return text(r.runner()->in_spec()); })
      .def_property_readonly("out_spec", [](const BoundRunner& r) { return text(r.runner()->out_spec()); })
      .def_property_readonly("metadata", [](const BoundRunner& r) { return text(r.runner()->metadata()); })
      .def_property_readonly("call_layout", [](const BoundRunner& r) {
        return call_layout_name(r.runner()->executor().call_layout());
      });
}

}  // namespace externspec::binding
