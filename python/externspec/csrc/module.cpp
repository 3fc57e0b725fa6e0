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
py::object decode_error, version_error, spec_mismatch_error, call_error, unsupported_error;

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
    if (reads_tensors == tensor && k >= f.start && k < f.start + f.count) return "argument `" + f.arg_name + "`";
  }
  for (std::size_t i = 0; i < plan.outputs.size(); ++i)
    if (!tensor && plan.outputs[i].kind == externspec::OutKind::Int && plan.outputs[i].slot == k)
      return "int return " + std::to_string(i);
  return "slot";
}

// The rule of runtime.py's _wrong_element, in its words: an int slot takes an int in int64 range
// (anything with __index__, not a bool or a float).
int64_t int_slot(const externspec::NodePlan& plan, py::handle v, std::size_t k) {
  auto wrong = [&](const std::string& what) {
    return CallError(plan.label + ": int_args[" + std::to_string(k) + "] (" + slot_owner(plan, false, k) + ") " + what);
  };
  py::object number;
  if (PyBool_Check(v.ptr()) || !PyIndex_Check(v.ptr())) throw wrong("should be an int, got " + type_name(v));
  number = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!number) {
    PyErr_Clear();
    throw wrong("should be an int, got " + type_name(v));
  }
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
  if (overflow) throw wrong("does not fit in int64");
  return value;
}

void call_function(ProxyExecutor& ex, py::handle index, py::handle int_args, py::handle tensor_arg) {
  long long i = 0;
  if (!PyLong_Check(index.ptr()) || PyBool_Check(index.ptr()))
    throw CallError("extern node index " + std::string(py::repr(index)) + " out of range: the spec has " +
                    std::to_string(ex.size()) + " nodes");
  int overflow = 0;
  i = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow || i < 0 || static_cast<std::size_t>(i) >= ex.size())
    throw CallError("extern node index " + std::string(py::repr(index)) + " out of range: the spec has " +
                    std::to_string(ex.size()) + " nodes");
  const auto& plan = ex.plan(static_cast<std::size_t>(i));
  if (!PyList_Check(tensor_arg.ptr()))
    throw CallError(plan.label + ": tensor_args must be a list (output tensors are stored into it), got " +
                    type_name(tensor_arg));
  auto tensor_args = py::reinterpret_borrow<py::list>(tensor_arg);
  py::sequence int_seq = py::reinterpret_borrow<py::sequence>(int_args);
  std::size_t n = tensor_args.size();
  ProxyExecutor::check_lengths(plan, static_cast<std::int64_t>(int_seq.size()), static_cast<std::int64_t>(n));
  std::vector<int64_t> ints(int_seq.size());
  for (std::size_t k = 0; k < ints.size(); ++k) ints[k] = int_slot(plan, int_seq[k], k);
  // Input slots must hold tensors; output slots are overwritten, whatever they hold.
  std::vector<at::Tensor> slots(n);
  for (std::size_t k = 0; k < static_cast<std::size_t>(plan.num_input_tensors); ++k) {
    py::handle h = tensor_args[k];
    if (!THPVariable_Check(h.ptr()))
      throw CallError(plan.label + ": tensor_args[" + std::to_string(k) + "] (" + slot_owner(plan, true, k) +
                      ") should be a Tensor, got " + type_name(h));
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
  m.doc() = "externspec's C++ proxy executor and AOTInductor runner (built on first use)";

  m.def("_register_errors", [](py::object decode, py::object version, py::object mismatch, py::object call,
                               py::object unsupported) {
    decode_error = std::move(decode);
    version_error = std::move(version);
    spec_mismatch_error = std::move(mismatch);
    call_error = std::move(call);
    unsupported_error = std::move(unsupported);
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
    }
  });

  py::class_<ProxyExecutor>(m, "ProxyExecutor")
      .def(py::init([](const std::string& json, const py::dict& objects, std::vector<std::string> allow_ops) {
             auto objs = custom_objects_of(objects);
             py::gil_scoped_release release;
             return std::make_unique<ProxyExecutor>(json, std::move(objs), std::move(allow_ops));
           }),
           py::arg("json"), py::arg("custom_objects") = py::dict(), py::arg("allow_ops") = std::vector<std::string>{})
      .def("__len__", &ProxyExecutor::size)
      .def("call_function", &call_function, py::arg("index"), py::arg("int_args"), py::arg("tensor_args"))
      .def("num_slots", [](const ProxyExecutor& ex, std::size_t index) {
        const auto& p = ex.plan(index);
        return py::make_tuple(p.num_input_tensors, p.num_tensors, p.num_input_ints, p.num_ints);
      });

  py::class_<AOTIRunner>(m, "AOTIRunner")
      .def(py::init([](const std::string& library, const std::string& json, const py::dict& objects,
                       std::vector<std::optional<externspec::InputShape>> shapes) {
             auto objs = custom_objects_of(objects);
             py::gil_scoped_release release;
             return std::make_unique<AOTIRunner>(library, json, std::move(objs), std::move(shapes));
           }),
           py::arg("library"), py::arg("json"), py::arg("custom_objects") = py::dict(),
           py::arg("input_shapes") = std::vector<std::optional<externspec::InputShape>>{})
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
      .def_property_readonly("out_spec", &AOTIRunner::out_spec);

  m.def("bench_callboxed", &bench_callboxed, py::arg("executor"), py::arg("index"), py::arg("tensors"),
        py::arg("iterations"));
}
