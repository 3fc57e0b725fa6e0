// Runs an AOTInductor package (a `.pt2` from torch._inductor.aoti_compile_and_package) with
// externspec's executor as its proxy executor, from C++ alone:
//
//   externspec::AOTIRunner runner("model.pt2", {});          // or options: model name, device, ...
//   std::vector<at::Tensor> out = runner.run({x, y});
//
// Loading has two steps, as torch's AOTIModelPackageLoader and AOTIModelContainerRunner: the
// package is read, checked and extracted for the runner's device (cpp/csrc/aoti_package/aoti_package.h), then the
// runner opens the library, creates the container from it and runs it (docs/aoti-packages.md).
//
// Loading reads the zip's central directory itself before libtorch's reader
// (caffe2::serialize::PyTorchStreamReader) opens it: every member name is checked (absolute
// names, `.`/`..`/empty components, members outside the top folder and names recorded twice are
// refused, naming the member), and so is every recorded size that is read before a check of the
// runner's own (the members torch's reader inflates as it opens: 4 KiB each). Every member the
// runner uses is read up to its recorded size only, against a limit checked before reading
// (the extern-kernel file: MAX_JSON_BYTES; the metadata: 1 MiB; the wrapper source:
// max_source_bytes; the library and weight blob: max_extracted_bytes), and verified against its
// recorded size and CRC-32 before use. JSON (the extern-kernel file, `*.wrapper_metadata.json`)
// goes through externspec's bounded reader (MAX_JSON_BYTES, MAX_JSON_DEPTH). Only the members
// the model needs (its library and weight blob) are written, into a private 0700 temporary
// directory that is removed when loading fails and, on the CPU, once the model is loaded.
// A model library cannot be unmapped (its STB_GNU_UNIQUE symbols make it NODELETE, as under
// torch's loader): each distinct library stays loaded for the life of the process, and loading
// the same bytes again (compared in full) reuses it, mapping nothing new.
// Weights may live in the library or in a `*.wrapper_weights.blob` beside it (given to the model
// before its first run, as torch's loader does). Every run checks the inputs against what the
// package records about them (count, dtype, rank, sizes and the ranges of dynamic sizes, sizes
// shared between inputs, strides, device, layout) and that each has data behind every element
// it addresses (a FakeTensor, a Python-dispatching subclass, a tensor without storage or a view
// past its storage is refused), owns each output handle once (a model may return one tensor in
// several slots), and turns the model's own failure into a ModelError carrying the model's
// message, or ATen's for a C-shim call of the model's own that failed. Only the `*.wrapper.cpp`
// records dtypes and shapes (the library records the input count and names, the call spec the
// pytree, the metadata the device); a record applies to an input only under the library's own
// name for it. An input without a record makes loading warn (or, with require_input_records,
// refuses the package). The minimum 2 the compiler writes for every dynamic size is its own
// assumption, not the model's (a Dim(min=1) model runs size 1): only higher minimums are checked.
//
// On CUDA (a build with USE_CUDA, device "cuda" / "cuda:N", a package compiled for CUDA): the
// model's kernel files (`*.cubin`, `*.fatbin`) are extracted beside its library, as torch's loader
// does, and kept until the runner is destroyed; each run happens under a guard for the runner's
// device, on the stream given (default: that device's current stream), with that stream made
// current while the model runs, so the extern calls of the proxy executor run on it too; inputs
// must be on the runner's device. docs/cuda.md.
//
// Threads: one runner serves many threads. `run` may be called from any number of threads at
// once; up to `num_models` calls run in parallel, each on its own model instance of torch's
// container, and further calls wait in the runner for an instance to come free (not in the
// container: torch 2.13's container does not wake a waiting call when a run fails, and that call
// would wait forever). What `run` reads of the runner (the input checks, the executor's plans, the
// custom objects) is fixed at load; the per-call state (the input checks' symbol values, the
// executor's boxed stack and last error, the C shim's and the model's own last error in torch's
// runtime) is per thread. The accessors are const and safe from any thread. Not safe: destroying
// the runner while a `run` is in progress, and `run_with` with an executor that is not itself
// thread-safe. Torchbind objects are shared by every thread: a method that mutates its object (a
// queue's `push`) is as thread-safe as its class makes it.
//
// Facts this relies on (docs/aoti-packages.md): the library has no RPATH (libtorch must be loaded first), it is
// dlopen'ed RTLD_NOW | RTLD_LOCAL (RTLD_GLOBAL made a second model run the first one's code), the
// model takes ownership of input handles, output handles are released to the caller, and an
// exception thrown in call_function comes back only as a failure code, so the executor's own
// error is rethrown here.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#ifdef USE_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

#include <externspec/torch/errors.h>
#include <externspec/torch/proxy_executor.h>

struct AOTInductorModelContainerOpaque;  // torch's model container (aoti_runtime/interface.h)

namespace externspec {

namespace detail {
struct LoadedPackage;
}

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
  // Limit on the bytes of each torchbind object read with `load_custom_objects`.
  std::uint64_t max_custom_object_bytes = std::uint64_t{256} << 20;
  // Limit on the bytes written to disk (the library plus any weight blob); 0: 16 times the
  // package file's size (torch stores members uncompressed, so a package never needs more).
  std::uint64_t max_extracted_bytes = 0;
  // Limit on the wrapper source read for the input checks (it is read into memory).
  std::uint64_t max_source_bytes = std::uint64_t{64} << 20;
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
  struct Checks;
  class Admission;
  // Loading: the package (cpp/csrc/aoti_package/aoti_package.h), then the container made from it, in this order.
  void load(const std::string& package_path, const AOTIRunnerOptions& options);
  void open_library();
  void create_container();
  void load_weights();
  void check_weights_loaded() const;
  void read_signature();
  std::vector<std::string> input_names() const;
  void record_inputs(bool require_input_records);
  void compile_checks();
  PackageError model_failure(const std::string& what) const;
  void release() noexcept;
  void check_inputs(const std::vector<at::Tensor>& inputs) const;

  std::string name_;  // `package!member` of the library, for messages
  c10::Device device_{c10::kCPU};
  // The planned extern-kernel file, the metadata and the extracted files. The files are kept only
  // while the model may read them (CUDA kernels).
  std::unique_ptr<detail::LoadedPackage> package_;
  void* dl_ = nullptr;
  std::unique_ptr<Api> api_;
  AOTInductorModelContainerOpaque* container_ = nullptr;
  std::vector<RecordedInput> recorded_inputs_;
  std::unique_ptr<Checks> checks_;
  std::unique_ptr<Admission> admission_;  // at most num_models_ runs inside the container
  std::size_t num_inputs_ = 0, num_outputs_ = 0, num_models_ = 1;
  std::string in_spec_, out_spec_;
};

}  // namespace externspec
