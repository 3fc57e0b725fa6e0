// libFuzzer target: the C++ proxy executor's load path on arbitrary bytes, linked against libtorch.
//
// The input is the text of an ExternKernelNodes document. `externspec::ProxyExecutor` decodes it
// (nlohmann backend, the executor's own), checks node names, resolves every target in the c10
// dispatcher's registry, applies the op policy, parses `externspec.op_schema` metadata with
// torch's schema parser and plans every node against the runtime FunctionSchema. No kernel runs.
// The seeds are the conformance corpus's ExternKernelNodes documents and specs the exporter writes
// for registered aten ops (tests/fuzz/run_fuzz.py writes them).
//
// What counts as a bug, besides anything the sanitizers report: an exception that is not an
// externspec::Error (DecodeError, VersionError, SpecMismatchError, UnsupportedError, ...) escaping
// the constructor (in Python that would surface as a RuntimeError, not an externspec error), or a
// UnionAccessError (the executor read a union member without checking which one is set). Nodes
// whose plan is built are checked for consistency: the plan's slot counts are not negative, and a
// node whose call layout is undecided (`layout_undecided`) has lengths like any other.
#include <externspec/torch/proxy_executor.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);
  try {
    externspec::ProxyExecutor executor(json);
    for (std::size_t i = 0; i < executor.size(); ++i) {
      const externspec::NodePlan& plan = executor.plan(i);
      if (plan.num_ints < plan.num_input_ints || plan.num_tensors < plan.num_input_tensors ||
          plan.num_input_ints < 0 || plan.num_input_tensors < 0 ||
          plan.stack.size() != plan.schema().arguments().size()) {
        std::fprintf(stderr, "inconsistent plan for node %zu (%s): ints %lld/%lld tensors %lld/%lld stack %zu\n", i,
                     plan.label.c_str(), static_cast<long long>(plan.num_input_ints),
                     static_cast<long long>(plan.num_ints), static_cast<long long>(plan.num_input_tensors),
                     static_cast<long long>(plan.num_tensors), plan.stack.size());
        std::abort();
      }
    }
  } catch (const externspec::UnionAccessError& e) {
    std::fprintf(stderr, "the executor read a union member the node does not set: %s\n", e.what());
    std::abort();
  } catch (const externspec::Error&) {
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "non-externspec exception escaped ProxyExecutor's load: %s\n", e.what());
    std::abort();
  }
  return 0;
}
