// A C++ custom op library for the packaging tests and the example (`--ops libmy_ops.so`): ops that
// return a tensor, a tuple and a list, registered for CPU and Meta (export and AOTInductor trace
// through Meta). Built against the installed torch by tests/packaging/custom_op_package.py, as
// torch's own test ops library is not in every torch wheel (2.14.1's CUDA wheel has none).
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor add(const at::Tensor& a, const at::Tensor& b) { return a + b; }

std::tuple<at::Tensor, at::Tensor> tuple_out(const at::Tensor& a, int64_t k) { return {a * k, a + k}; }

std::vector<at::Tensor> list_out(at::TensorList xs, int64_t k) {
  std::vector<at::Tensor> out;
  for (const auto& x : xs) out.push_back(x * k);
  return out;
}

at::Tensor square(const at::Tensor& a) { return a * a; }

at::Tensor add_meta(const at::Tensor& a, const at::Tensor&) { return at::empty_like(a); }

std::tuple<at::Tensor, at::Tensor> tuple_out_meta(const at::Tensor& a, int64_t) {
  return {at::empty_like(a), at::empty_like(a)};
}

std::vector<at::Tensor> list_out_meta(at::TensorList xs, int64_t) {
  std::vector<at::Tensor> out;
  for (const auto& x : xs) out.push_back(at::empty_like(x));
  return out;
}

at::Tensor square_meta(const at::Tensor& a) { return at::empty_like(a); }

}  // namespace

TORCH_LIBRARY(my_ops, m) {
  m.def("add(Tensor a, Tensor b) -> Tensor");
  m.def("tuple_out(Tensor a, int k) -> (Tensor, Tensor)");
  m.def("list_out(Tensor[] xs, int k) -> Tensor[]");
  m.def("square(Tensor a) -> Tensor");
}

TORCH_LIBRARY_IMPL(my_ops, CPU, m) {
  m.impl("add", add);
  m.impl("tuple_out", tuple_out);
  m.impl("list_out", list_out);
  m.impl("square", square);
}

TORCH_LIBRARY_IMPL(my_ops, Meta, m) {
  m.impl("add", add_meta);
  m.impl("tuple_out", tuple_out_meta);
  m.impl("list_out", list_out_meta);
  m.impl("square", square_meta);
}
