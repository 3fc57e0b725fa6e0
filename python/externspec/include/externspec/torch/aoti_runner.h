// Runs an AOTInductor package (a `.pt2` from torch._inductor.aoti_compile_and_package) with
// externspec's executor as its proxy executor, from C++ alone:
//
//   externspec::AOTIRunner runner("model.pt2", {});          // or options: model name, device, ...
//   std::vector<at::Tensor> out = runner.run({x, y});
//   externspec::AOTIRunner from_memory(externspec::PackageBytes{bytes}, {});  // a package held in memory
//
// Loading reads the package without trusting it (member names, sizes and CRC-32s checked before
// torch's zip reader opens it; every member read within a limit; JSON through externspec's
// bounded reader), plans its extern-kernel file, and writes only the model's library and weights,
// into a private temporary directory. Every run checks the inputs against what the package
// records about them and turns the model's own failure into a ModelError. One runner serves many
// threads: up to `num_models` runs at once, each on its own model instance; destroying the runner
// during a run, or `run_with` an executor that is not thread-safe, is the caller's error. On CUDA
// (a build with USE_CUDA) each run happens on the runner's device and the stream given.
//
// The rules, their limits and the facts about torch they rely on: docs/aoti-packages.md (reading,
// the input records, threads, the library), docs/cuda.md (devices and streams) and SECURITY.md.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#ifdef USE_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

#include <externspec/torch/errors.h>
#include <externspec/torch/limits.h>
#include <externspec/torch/proxy_executor.h>

struct AOTInductorModelContainerOpaque;  // torch's model container (aoti_runtime/interface.h)

namespace externspec {

namespace detail {
struct LoadedPackage;
class InputChecks;
class OutputChecks;
}

// Every option of a runner, with its default: C++ sets the fields, Python the same names by keyword
// (`es.cpp.AOTIRunner(path, num_models=2)`, or `es.cpp.AOTIRunnerOptions(...)`, the bound class).
struct AOTIRunnerOptions {
  // The model inside the package: `<package>/data/aotinductor/<model_name>/*.wrapper.so`.
  std::string model_name = "model";
  // "cpu", or "cuda" / "cuda:N" in a build with CUDA (the package must have been compiled for it).
  std::string device = "cpu";
  // Torchbind objects the model's extern calls name (`as_custom_obj`), by name. These are used
  // as given; the package's own objects are read only with `load_custom_objects`.
  CustomObjects custom_objects;
  // Model instances in torch's container: how many `run` calls may run at once (1 to
  // kMaxNumModels; others are std::invalid_argument). Each instance has its own activations, not
  // its own weights.
  std::size_t num_models = 1;
  // More instances than any machine runs calls at once (10^6 took +796 MiB and 23 s to create).
  static constexpr std::size_t kMaxNumModels = 1024;
  // The one check of `num_models` (the runner's and Python's): std::invalid_argument naming the
  // option unless 1 <= n <= kMaxNumModels.
  static void check_num_models(std::int64_t n);
  // Custom op libraries (`.so`) to load before the extern-kernel file is planned, as
  // torch.ops.load_library does (dlopen, which registers the library's ops). Each path is loaded
  // once per process and stays loaded; a path that is not a loadable library is a PackageError
  // naming it and the loader's reason.
  std::vector<std::string> op_libraries;
  // Read the package's torchbind objects (`custom_objs_config.json` and the `data/constants/`
  // members it names) and unpickle them with torch's loader, as torch's AOTIModelPackageLoader
  // does. Off by default: unpickling a TorchScript object runs its class's `__setstate__`, native
  // code chosen by the package (SECURITY.md). Without it, a package whose extern calls need
  // objects not given in `custom_objects` is refused at load, before anything is unpickled.
  bool load_custom_objects = false;
  // What the load may read, keep and write (limits.h).
  Limits limits;
  // A package that records no dtype and shape for some input (the records are in its
  // `*.wrapper.cpp`, which a model does not need to run): false warns at load (TORCH_WARN, a
  // Python warning) and runs with the checks that need no record; true refuses it (PackageError).
  bool require_input_records = false;
  // Where the extern-kernel file's omitted kwarg-only defaults are (ProxyExecutor's `call_layout`):
  // unset ("auto") decides from the calls the `*.wrapper.cpp` states, at load (a call that matches no
  // layout of its node is a SpecMismatchError naming it), or without one at the first deciding call.
  std::optional<CallLayout> call_layout;
};

// What the package records about one input; each field is unset when the package does not say.
struct RecordedInput {
  std::optional<c10::ScalarType> dtype;
  std::optional<c10::DeviceType> device_type;
  // Sizes and strides as the compiled code wrote them: integer literals, or expressions over the
  // symbols of dynamic sizes (`s77`, `4L*s77`). Empty `rank`: the rank is not recorded.
  std::optional<std::size_t> rank;
  std::vector<std::string> sizes, strides;
  // Ranges of dynamic sizes, by dimension.
  std::map<std::size_t, std::int64_t> min_size, max_size;
};

// A package held in memory (read from an object store or a database): loaded with every check a
// file gets; nothing of it is written but the model's library (and GPU kernels off the CPU), into
// the runner's private directory; its weight blob is read into memory. The bytes are read only
// while the constructor runs and must stay valid until it returns.
struct PackageBytes {
  std::string_view bytes;
  std::string name = "<package bytes>";  // names the package in messages, as a path does
};

// Loads custom op libraries into this process (what AOTIRunnerOptions::op_libraries does before
// planning): each path once per process (by its canonical path), kept loaded. Thread-safe. Throws
// PackageError naming the path and the loader's reason.
void load_op_libraries(const std::vector<std::string>& paths);

class AOTIRunner {
 public:
  // Throws PackageError (not a package, no such model, a member escaping the package or over a
  // limit, not a model library), DecodeError/VersionError/SpecMismatchError (its extern-kernel
  // file), UnsupportedError (a device this build cannot run).
  explicit AOTIRunner(const std::string& package_path, AOTIRunnerOptions options = {});
  explicit AOTIRunner(const PackageBytes& package, AOTIRunnerOptions options = {});
  ~AOTIRunner();
  AOTIRunner(const AOTIRunner&) = delete;
  AOTIRunner& operator=(const AOTIRunner&) = delete;

  // Throws CallError (inputs that do not match what the package records, naming the input),
  // ModelError (the model's own check failed, with its message) or the executor's errors.
  // Thread-safe (see the top of this file).
  // `stream`: a cudaStream_t of the runner's device (as torch's runner takes `stream_handle`), null
  // for the device's current stream; UnsupportedError for a stream given to a CPU runner.
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs, void* stream = nullptr);
#ifdef USE_CUDA
  // The stream must be on the runner's device (CallError otherwise).
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs, const c10::cuda::CUDAStream& stream);
#endif
  // Run with another proxy executor (benchmarks compare executors on the same compiled model).
  std::vector<at::Tensor> run_with(const std::vector<at::Tensor>& inputs, torch::aot_inductor::ProxyExecutor* executor,
                                   void* stream = nullptr);
  const c10::Device& device() const { return device_; }

  std::size_t num_inputs() const { return num_inputs_; }
  std::size_t num_models() const { return num_models_; }
  std::size_t num_outputs() const { return num_outputs_; }
  const ProxyExecutor& executor() const;
  const std::vector<RecordedInput>& recorded_inputs() const { return recorded_inputs_; }
  // The pytree specs (torch.utils._pytree.treespec_dumps) of the model's inputs and outputs.
  const std::string& in_spec() const { return in_spec_; }
  const std::string& out_spec() const { return out_spec_; }
  // The package's `*.wrapper_metadata.json` (AOTI_DEVICE_KEY, ...), as text ("" if absent).
  const std::string& metadata() const;

 private:
  struct Api;
  class Admission;
  // Loading: the package (`read`: detail::load_package of a file or bytes), then the container made
  // from it, in this order.
  using ReadPackage = std::function<std::unique_ptr<detail::LoadedPackage>(const c10::Device&)>;
  AOTIRunner(const ReadPackage& read, const AOTIRunnerOptions& options);
  void load(const ReadPackage& read, const AOTIRunnerOptions& options);
  void open_library();
  void create_container();
  void load_weights();
  void check_weights_loaded() const;
  void read_signature();
  std::vector<std::string> input_names() const;
  void record_inputs(bool require_input_records);
  void record_outputs();
  PackageError model_failure(const std::string& what) const;
  void release() noexcept;

  std::string name_;  // `package!member` of the library, for messages
  c10::Device device_{c10::kCPU};
  // The planned extern-kernel file, the metadata and the extracted files. The files are kept only
  // while the model may read them (CUDA kernels).
  std::unique_ptr<detail::LoadedPackage> package_;
  void* dl_ = nullptr;
  std::unique_ptr<Api> api_;
  AOTInductorModelContainerOpaque* container_ = nullptr;
  std::vector<RecordedInput> recorded_inputs_;
  std::unique_ptr<detail::InputChecks> input_checks_;  // the inputs, checked before each run
  std::unique_ptr<detail::OutputChecks> output_checks_;  // the extern calls' outputs, checked after each call
  std::unique_ptr<Admission> admission_;  // at most num_models_ runs inside the container
  std::size_t num_inputs_ = 0, num_outputs_ = 0, num_models_ = 1;
  std::string in_spec_, out_spec_;
};

}  // namespace externspec
