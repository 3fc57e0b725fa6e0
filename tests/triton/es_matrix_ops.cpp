// es_matrix::scale (tests/support/matrix_ops.py registers it from Python) as a C++ op library, so a
// server process without Python (tritonserver with the externspec backend) runs the cross-version
// matrix's lite packages, given this library in the model's `op_libraries` parameter. The same
// schema and the same arithmetic: each argument moves the result by its own weight.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor scale(const at::Tensor& x, int64_t p, int64_t k, double f, c10::SymInt s) {
  return x * p + (static_cast<double>(k) * 0.5 + f * 0.25 + static_cast<double>(s.expect_int()) * 0.125);
}

}  // namespace

TORCH_LIBRARY(es_matrix, m) {
  m.def("scale(Tensor x, int p=2, *, int k=3, float f=1.5, SymInt s=4) -> Tensor",
        {at::Tag::needs_fixed_stride_order});
}

TORCH_LIBRARY_IMPL(es_matrix, CompositeExplicitAutograd, m) { m.impl("scale", scale); }
