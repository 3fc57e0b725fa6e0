// The Python binding of the C++ executor and runner (imported as externspec.cpp's extension).
//
// Errors keep their kind across the boundary: externspec::DecodeError/VersionError and the
// executor's SpecMismatchError/CallError/UnsupportedError become the Python classes of the same
// names in externspec.errors (registered by externspec.cpp at import), so callers catch
// es.ExternSpecError for both executors.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/jit/api/object.h>
#include <torch/headeronly/version.h>

#include <chrono>

#include <externspec/torch/aoti_runner.h>
#include <externspec/torch/errors.h>
#include <externspec/torch/proxy_executor.h>

namespace py = pybind11;
using externspec::AOTIRunner;
using externspec::CallError;
using externspec::CustomObjects;
using externspec::ProxyExecutor;

namespace {

// Python exception classes, set by `_register_errors` (externspec.errors).
py::object decode_error, version_error, spec_mismatch_error, call_error, unsupported_error, package_error, model_error;

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

void call_function(ProxyExecutor& ex, py::handle index, py::handle int_args, py::list tensor_args) {
  long long i = 0;
  if (!PyLong_Check(index.ptr()) || PyBool_Check(index.ptr()))
    throw CallError("extern node index " + std::string(py::repr(index)) + " out of range: the spec has " +
                    std::to_string(ex.size()) + " nodes");
  int overflow = 0;
  i = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow || i < 0 || static_cast<std::size_t>(i) >= ex.size())
    throw CallError("extern node index " + std::string(py::repr(index)) + " out of range: the spec has " +
                    std::to_string(ex.size()) + " nodes");
  std::vector<int64_t> ints;
  for (auto v : py::iter(int_args)) ints.push_back(py::cast<int64_t>(v));
  std::size_t n = tensor_args.size();
  std::vector<at::Tensor> slots(n);
  for (std::size_t k = 0; k < n; ++k)
    if (!tensor_args[k].is_none()) slots[k] = tensor_of(tensor_args[k], "tensor_args", k);
  std::vector<AtenTensorHandle> handles(n);
  for (std::size_t k = 0; k < n; ++k) handles[k] = reinterpret_cast<AtenTensorHandle>(&slots[k]);
  if (ints.size() > INT32_MAX || n > INT32_MAX) throw CallError("array too long for the AOTInductor ABI");
  {
    py::gil_scoped_release release;
    ex.call_function(static_cast<int>(i), static_cast<int>(ints.size()), ints.data(), static_cast<int>(n),
                     handles.data());
  }
  // Output slots follow the inputs: store what the executor wrote into them.
  const auto& plan = ex.plan(static_cast<std::size_t>(i));
  for (std::size_t k = static_cast<std::size_t>(plan.num_input_tensors); k < n; ++k)
    if (slots[k].defined()) tensor_args[k] = py::reinterpret_steal<py::object>(THPVariable_Wrap(slots[k]));
}

std::vector<at::Tensor> tensors_of(const py::args& args) {
  std::vector<at::Tensor> out;
  out.reserve(args.size());
  for (std::size_t k = 0; k < args.size(); ++k) out.push_back(tensor_of(args[k], "inputs", k));
  return out;
}

py::list wrap(std::vector<at::Tensor> ts) {
  py::list out;
  for (auto& t : ts) out.append(py::reinterpret_steal<py::object>(THPVariable_Wrap(std::move(t))));
  return out;
}

// Reference for benchmarks: node `index`'s prepared stack through a bare callBoxed loop, with the
// tensor slots filled in order and no checks (what any executor must at least do).
double bench_callboxed(const ProxyExecutor& ex, std::size_t index, py::list tensors, std::size_t iterations) {
  const auto& plan = ex.plan(index);
  std::vector<at::Tensor> ts;
  for (std::size_t k = 0; k < static_cast<std::size_t>(plan.num_input_tensors); ++k)
    ts.push_back(tensor_of(tensors[k], "tensors", k));
  py::gil_scoped_release release;
  auto start = std::chrono::steady_clock::now();
  for (std::size_t it = 0; it < iterations; ++it) {
    std::vector<c10::IValue> stack(plan.stack);
    for (const auto& f : plan.fills) stack[f.stack_index] = ts[f.start];
    plan.op.callBoxed(stack);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void raise_as(const py::object& cls, const char* message) {
  PyErr_SetObject(cls.ptr(), cls(message).ptr());
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "externspec's C++ proxy executor and AOTInductor runner";
  // The torch this was compiled against: es.cpp refuses a prebuilt binding under another release.
  m.attr("torch_version") = TORCH_VERSION;

  m.def("_register_errors", [](py::object decode, py::object version, py::object mismatch, py::object call,
                               py::object unsupported, py::object package, py::object model) {
    decode_error = std::move(decode);
    version_error = std::move(version);
    spec_mismatch_error = std::move(mismatch);
    call_error = std::move(call);
    unsupported_error = std::move(unsupported);
    package_error = std::move(package);
    model_error = std::move(model);
  });
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p || !decode_error) return;
    try {
      std::rethrow_exception(p);
    } catch (const externspec::DecodeError& e) {
      py::list errors;
      for (const auto& [path, message] : e.errors()) errors.append(py::make_tuple(path, message));
      PyErr_SetObject(decode_error.ptr(), decode_error(errors).ptr());
    } catch (const externspec::VersionError& e) {
      raise_as(version_error, e.what());
    } catch (const externspec::SpecMismatchError& e) {
      raise_as(spec_mismatch_error, e.what());
    } catch (const externspec::CallError& e) {
      raise_as(call_error, e.what());
    } catch (const externspec::UnsupportedError& e) {
      raise_as(unsupported_error, e.what());
    } catch (const externspec::PackageError& e) {
      raise_as(package_error, e.what());
    } catch (const externspec::ModelError& e) {
      raise_as(model_error, e.what());
    }
  });

  py::class_<ProxyExecutor>(m, "ProxyExecutor")
      .def(py::init([](const std::string& json, const py::dict& objects) {
             auto objs = custom_objects_of(objects);
             py::gil_scoped_release release;
             return std::make_unique<ProxyExecutor>(json, std::move(objs));
           }),
           py::arg("json"), py::arg("custom_objects") = py::dict())
      .def("__len__", &ProxyExecutor::size)
      .def("call_function", &call_function, py::arg("index"), py::arg("int_args"), py::arg("tensor_args"))
      .def("num_slots", [](const ProxyExecutor& ex, std::size_t index) {
        const auto& p = ex.plan(index);
        return py::make_tuple(p.num_input_tensors, p.num_tensors, p.num_input_ints, p.num_ints);
      });

  py::class_<AOTIRunner>(m, "AOTIRunner")
      .def(py::init([](const std::string& package_path, const std::string& model_name, const std::string& device,
                       const py::dict& objects, std::uint64_t max_extracted_bytes, std::uint64_t max_source_bytes) {
             externspec::AOTIRunnerOptions options;
             options.model_name = model_name;
             options.device = device;
             options.custom_objects = custom_objects_of(objects);
             options.max_extracted_bytes = max_extracted_bytes;
             options.max_source_bytes = max_source_bytes;
             py::gil_scoped_release release;
             return std::make_unique<AOTIRunner>(package_path, std::move(options));
           }),
           py::arg("package_path"), py::arg("model_name"), py::arg("device"), py::arg("custom_objects"),
           py::arg("max_extracted_bytes"), py::arg("max_source_bytes"))
      .def("__call__", [](AOTIRunner& r, py::args args) {
        auto inputs = tensors_of(args);
        std::vector<at::Tensor> out;
        {
          py::gil_scoped_release release;
          out = r.run(inputs);
        }
        return wrap(std::move(out));
      })
      .def_property_readonly("num_inputs", &AOTIRunner::num_inputs)
      .def_property_readonly("num_outputs", &AOTIRunner::num_outputs)
      .def_property_readonly("in_spec", &AOTIRunner::in_spec)
      .def_property_readonly("out_spec", &AOTIRunner::out_spec)
      .def_property_readonly("metadata", &AOTIRunner::metadata);

  m.def("bench_callboxed", &bench_callboxed, py::arg("executor"), py::arg("index"), py::arg("tensors"),
        py::arg("iterations"));
}
