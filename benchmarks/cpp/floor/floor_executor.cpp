// The floor the C++ executor benchmarks measure externspec against (benchmarks/bench_cpp_executor.py,
// bench_lite_models.py), as a Python module of its own: benchmark code does not ship in es.cpp's
// binding. It uses only externspec's public C++ API and links the libexternspec_runtime.so es.cpp
// runs (benchmarks/floor.py builds it against that library's CMake package), so the figures are
// those of the binary that ships.
//
// No es.cpp object crosses into this module (pybind classes shared between two modules are
// fragile): it makes its own externspec::ProxyExecutor from the spec's JSON text and its own
// externspec::AOTIRunner from the package path (the same path loads the same model library).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include <externspec/torch/aoti_runner.h>
#include <externspec/torch/errors.h>
#include <externspec/torch/proxy_executor.h>

namespace py = pybind11;

namespace {

at::Tensor tensor_of(py::handle h, std::size_t k) {
  if (!THPVariable_Check(h.ptr()))
    throw py::type_error("tensors[" + std::to_string(k) + "] must be a Tensor");
  return THPVariable_Unpack(h.ptr());
}

std::vector<at::Tensor> tensors_of(const py::args& inputs) {
  std::vector<at::Tensor> out;
  out.reserve(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) out.push_back(tensor_of(inputs[k], k));
  return out;
}

// What any proxy executor must do per call and nothing more. Node `index`'s prepared stack with
// its single tensor and int slots filled from the arrays, callBoxed, the tensor returns moved into
// their output handles; no checks beyond the return count. Only for nodes `check_supported` takes,
// ops that do not call back into an executor, and one thread at a time (its stack is a member:
// the floor needs no thread-local look-up).
class FloorExecutor : public torch::aot_inductor::ProxyExecutor {
 public:
  explicit FloorExecutor(const externspec::ProxyExecutor& plans) : plans_(plans) {}

  // std::invalid_argument unless the floor can run the node (ValueError in Python).
  static void check_supported(const externspec::NodePlan& plan) {
    for (const auto& f : plan.fills)
      if (f.kind != externspec::FillKind::Tensor && f.kind != externspec::FillKind::Int)
        throw std::invalid_argument(plan.label + ": the floor executor fills only single tensor and int slots");
    for (const auto& o : plan.outputs)
      if (o.kind != externspec::OutKind::Tensor && o.kind != externspec::OutKind::Int &&
          o.kind != externspec::OutKind::None)
        throw std::invalid_argument(plan.label + ": the floor executor returns only single tensors and ints");
  }

  void call_function(int index, int, int64_t* ints, int, AtenTensorHandle* tensors) override {
    const auto& plan = plans_.plan(static_cast<std::size_t>(index));
    struct Clear {
      std::vector<c10::IValue>& stack;
      ~Clear() { stack.clear(); }
    } clear{stack_};
    std::vector<c10::IValue>& stack = stack_;
    auto fill = plan.fills.begin();  // in stack order
    for (std::size_t i = 0; i < plan.stack.size(); ++i) {
      if (fill == plan.fills.end() || fill->stack_index != i) {
        stack.push_back(plan.stack[i]);
      } else {
        if (fill->kind == externspec::FillKind::Int) stack.emplace_back(ints[fill->start]);
        else stack.emplace_back(*reinterpret_cast<const at::Tensor*>(tensors[fill->start]));
        ++fill;
      }
    }
    plan.call(stack);
    if (stack.size() != plan.num_returns) throw externspec::CallError(plan.label + ": wrong number of returns");
    for (std::size_t i = 0; i < plan.outputs.size(); ++i)
      if (plan.outputs[i].kind == externspec::OutKind::Tensor)
        *reinterpret_cast<at::Tensor*>(tensors[plan.outputs[i].slot]) = std::move(stack[i]).toTensor();
  }

 private:
  const externspec::ProxyExecutor& plans_;
  std::vector<c10::IValue> stack_;  // its capacity is kept from one call to the next
};

// `executor.call_function(index, ...)` in a C++ loop on the arrays `tensors` (inputs, then output
// slots) and `ints`, the output slots kept from one call to the next as the compiled wrapper keeps them.
double time_calls(torch::aot_inductor::ProxyExecutor& executor, const externspec::NodePlan& plan, std::size_t index,
                  const py::list& tensors, std::size_t iterations, std::vector<int64_t> ints) {
  externspec::ProxyExecutor::check_lengths(plan, static_cast<std::int64_t>(ints.size()), plan.num_tensors);
  std::vector<at::Tensor> slots(static_cast<std::size_t>(plan.num_tensors));
  for (std::size_t k = 0; k < static_cast<std::size_t>(plan.num_input_tensors); ++k)
    slots[k] = tensor_of(tensors[k], k);
  std::vector<AtenTensorHandle> handles(slots.size());
  for (std::size_t k = 0; k < slots.size(); ++k) handles[k] = reinterpret_cast<AtenTensorHandle>(&slots[k]);
  py::gil_scoped_release release;
  auto start = std::chrono::steady_clock::now();
  for (std::size_t it = 0; it < iterations; ++it)
    executor.call_function(static_cast<int>(index), static_cast<int>(ints.size()), ints.data(),
                           static_cast<int>(handles.size()), handles.data());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One spec's nodes timed in C++ loops: through the floor executor, and through externspec's own.
class Calls {
 public:
  explicit Calls(std::string_view json) : executor_(json) {}

  double floor(std::size_t index, const py::list& tensors, std::size_t iterations, std::vector<int64_t> ints) {
    const auto& plan = executor_.plan(index);
    FloorExecutor::check_supported(plan);
    FloorExecutor floor(executor_);
    return time_calls(floor, plan, index, tensors, iterations, std::move(ints));
  }

  double externspec(std::size_t index, const py::list& tensors, std::size_t iterations, std::vector<int64_t> ints) {
    return time_calls(executor_, executor_.plan(index), index, tensors, iterations, std::move(ints));
  }

 private:
  externspec::ProxyExecutor executor_;
};

// A compiled model run with the floor executor: the reference for the runner's per-call cost.
class FloorRunner {
 public:
  explicit FloorRunner(const std::string& package_path) : runner_(package_path), executor_(runner_.executor()) {
    for (std::size_t i = 0; i < runner_.executor().size(); ++i)
      FloorExecutor::check_supported(runner_.executor().plan(i));
  }

  // The GIL stays held: one thread at a time uses the floor executor.
  py::list run(const py::args& inputs) {
    py::list out;
    for (auto& t : runner_.run_with(tensors_of(inputs), &executor_))
      out.append(py::reinterpret_steal<py::object>(THPVariable_Wrap(std::move(t))));
    return out;
  }

 private:
  externspec::AOTIRunner runner_;
  FloorExecutor executor_;
};

}  // namespace

PYBIND11_MODULE(externspec_floor, m) {
  m.doc() = "The floor executor of externspec's C++ benchmarks";
  py::class_<Calls>(m, "Calls")
      .def(py::init<std::string_view>(), py::arg("json"))
      .def("floor", &Calls::floor, py::arg("index"), py::arg("tensors"), py::arg("iterations"),
           py::arg("ints") = std::vector<int64_t>{})
      .def("externspec", &Calls::externspec, py::arg("index"), py::arg("tensors"), py::arg("iterations"),
           py::arg("ints") = std::vector<int64_t>{});
  py::class_<FloorRunner>(m, "FloorRunner")
      .def(py::init<const std::string&>(), py::arg("package_path"))
      .def("__call__", &FloorRunner::run);
}
