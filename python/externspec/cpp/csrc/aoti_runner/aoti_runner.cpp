#include <externspec/torch/aoti_runner.h>

#include <torch/csrc/inductor/aoti_runtime/interface.h>
#include <torch/headeronly/version.h>

#include <c10/util/Exception.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

#ifdef USE_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <externspec/torch/errors.h>

#include "executor/torch_types.h"
// The message of the last C-shim call that failed on this thread (torch >= 2.6 exports it).
#if __has_include(<torch/csrc/shim_exception_state.h>)
#include <torch/csrc/shim_exception_state.h>
#define EXTERNSPEC_SHIM_EXCEPTION_STATE 1
#endif

#include "aoti_package/model_package_loader.h"
#include "aoti_runner/input_checks.h"
#include "aoti_runner/model_library.h"
#include "aoti_runner/output_checks.h"
#include "aoti_runner/torch_release.h"
#include "aoti_package/wrapper_inputs.h"
#include "aoti_package/wrapper_outputs.h"

namespace externspec {

// Entry points torch 2.11's interface.h does not declare (its model libraries lack them too): typed
// here from the C ABI, and checked against the header where it declares them.
using ExtractConstantsMapEntriesFn = AOTIRuntimeError (*)(AOTInductorModelContainerHandle,
                                                          const AOTInductorConstantMapEntry**, size_t*, bool);
using GetLastErrorFn = AOTIRuntimeError (*)(const char**);
#if TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 13
static_assert(std::is_same_v<ExtractConstantsMapEntriesFn, decltype(&AOTInductorModelContainerExtractConstantsMapEntries)>);
static_assert(std::is_same_v<GetLastErrorFn, decltype(&AOTInductorGetLastError)>);
#endif

struct AOTIRunner::Api {
  decltype(&AOTInductorModelContainerCreateWithDevice) create = nullptr;
  decltype(&AOTInductorModelContainerDelete) destroy = nullptr;
  decltype(&AOTInductorModelContainerRun) run = nullptr;
  decltype(&AOTInductorModelContainerGetNumInputs) num_inputs = nullptr;
  decltype(&AOTInductorModelContainerGetNumOutputs) num_outputs = nullptr;
  decltype(&AOTInductorModelContainerGetCallSpec) call_spec = nullptr;
  // Optional: older libraries lack them.
  decltype(&AOTInductorModelContainerGetNumConstants) num_constants = nullptr;
  decltype(&AOTInductorModelContainerGetConstantFromFolded) constant_from_folded = nullptr;
  ExtractConstantsMapEntriesFn constants = nullptr;
  decltype(&AOTInductorModelContainerGetConstantsBlobSize) blob_size = nullptr;
  decltype(&AOTInductorModelUpdateConstantsFromBlob) update_from_blob = nullptr;
  GetLastErrorFn last_error = nullptr;
  decltype(&AOTInductorModelContainerGetInputName) input_name = nullptr;
};

// Lets at most `n` runs into the container at once: torch's container has a pool of its own, but a
// run that fails hands its model back without waking a run waiting for one (torch 2.13,
// AOTInductorModelContainer::run), which then waits forever. With no more runs inside than model
// instances, the container always has one free and never waits.
//
// A run that finds an instance free takes it with one atomic operation and gives it back with two:
// the mutex and condition variable are touched only while some run waits (a lock pair on every
// run was about 1% of a 5 us run; benchmarks/bench_cpp_runner.py). No wake-up is lost: a waiter
// counts itself in `waiting_` before it looks at `free_` again under the mutex, and a run giving
// back adds to `free_` before it reads `waiting_` (both sequentially consistent), so either the
// waiter sees the instance or the giver sees the waiter and notifies under the mutex.
class AOTIRunner::Admission {
 public:
  explicit Admission(std::size_t n) : free_(static_cast<std::ptrdiff_t>(n)) {}
  class Ticket {
   public:
    explicit Ticket(Admission& a) : a_(a) {
      if (!a_.try_take()) a_.wait_and_take();
    }
    ~Ticket() { a_.give_back(); }
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

   private:
    Admission& a_;
  };

 private:
  bool try_take() {
    for (std::ptrdiff_t n = free_.load(); n > 0;)
      if (free_.compare_exchange_weak(n, n - 1)) return true;
    return false;
  }
  void wait_and_take() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++waiting_;
    freed_.wait(lock, [&] { return try_take(); });
    --waiting_;
  }
  void give_back() {
    ++free_;
    if (waiting_.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      freed_.notify_one();
    }
  }

  std::atomic<std::ptrdiff_t> free_;
  std::atomic<std::size_t> waiting_{0};
  std::mutex mutex_;
  std::condition_variable freed_;
};

namespace {

template <class F>
void load_symbol(void* dl, const std::string& name, const char* symbol, F& out, bool required = true) {
  dlerror();
  out = reinterpret_cast<F>(dlsym(dl, symbol));
  if (out == nullptr && required)
    throw PackageError(name + ": not an AOTInductor model library: symbol `" + symbol + "` is missing");
}

// The inputs the package records no dtype and rank for, as "input 0, input 2", or "".
std::string unrecorded(const std::vector<RecordedInput>& inputs) {
  std::string out;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].dtype || !inputs[i].rank) out += (out.empty() ? "input " : ", input ") + std::to_string(i);
  return out;
}

// The message ATen gave the last C-shim call that failed on this thread (the compiled code's own
// calls, e.g. aoti_torch_cpu_add_Tensor), or "".
std::string shim_error() {
#ifdef EXTERNSPEC_SHIM_EXCEPTION_STATE
  return torch::csrc::shim::details::get_torch_exception_what_without_backtrace();
#else
  return {};
#endif
}

void clear_shim_error() {
#ifdef EXTERNSPEC_SHIM_EXCEPTION_STATE
  torch::csrc::shim::details::set_torch_exception_what_without_backtrace(std::string());
#endif
}

// Maps a regular file read-only for the duration of a scope.
class Mapping {
 public:
  Mapping(const std::string& file, std::uint64_t size, const std::string& label) : size_(size) {
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw PackageError(label + ": cannot open: " + std::strerror(errno));
    data_ = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (data_ == MAP_FAILED) throw PackageError(label + ": cannot map: " + std::strerror(errno));
  }
  ~Mapping() { ::munmap(data_, size_); }
  const std::uint8_t* data() const { return static_cast<const std::uint8_t*>(data_); }

 private:
  void* data_ = nullptr;
  std::uint64_t size_;
};

// The device the runner runs on, checked against what this build and machine have; a CUDA device
// gets an index (the current device when none is given).
c10::Device runner_device(const std::string& text) {
  c10::Device device = parse_device(text);
#ifndef USE_CUDA
  if (!device.is_cpu())
    throw UnsupportedError("device '" + text +
                           "': this build of externspec has no CUDA (it was compiled without USE_CUDA) and runs "
                           "models on the CPU only");
#else
  if (!device.is_cpu() && !device.is_cuda())
    throw UnsupportedError("device '" + text + "': externspec runs models on cpu or cuda");
  if (device.is_cuda()) {
    const auto count = c10::cuda::device_count();
    if (!device.has_index()) device.set_index(count > 0 ? c10::cuda::current_device() : 0);
    if (device.index() >= count)
      throw UnsupportedError("device '" + text + "': " +
                             (count == 0 ? std::string("no CUDA device is visible")
                                         : std::to_string(count) + " CUDA device(s) are visible (cuda:0.." +
                                               std::to_string(count - 1) + ")"));
  }
#endif
  return device;
}

}  // namespace

AOTIRunner::AOTIRunner(const std::string& package_path, AOTIRunnerOptions options)
    : AOTIRunner([&](const c10::Device& device) { return detail::load_package(package_path, options, device); },
                 options) {}

AOTIRunner::AOTIRunner(const PackageBytes& package, AOTIRunnerOptions options)
    : AOTIRunner([&](const c10::Device& device) { return detail::load_package(package, options, device); }, options) {}

AOTIRunner::AOTIRunner(const ReadPackage& read, const AOTIRunnerOptions& options) : api_(std::make_unique<Api>()) {
  try {
    load(read, options);
  } catch (...) {
    release();
    throw;
  }
}

void AOTIRunnerOptions::check_num_models(std::int64_t n) {
  if (n < 1 || static_cast<std::uint64_t>(n) > kMaxNumModels)
    throw std::invalid_argument("num_models is " + std::to_string(n) + ": a runner takes 1 to " +
                                std::to_string(kMaxNumModels) + " model instances");
}

AOTIRunner::~AOTIRunner() { release(); }

void AOTIRunner::release() noexcept {
  if (container_) api_->destroy(container_);
  container_ = nullptr;
  dl_ = nullptr;  // never closed: the library stays loaded for the next runner of the same bytes
  package_.reset();  // its files, once the container that may read them is gone
}

const ProxyExecutor& AOTIRunner::executor() const { return *package_->executor; }

const std::string& AOTIRunner::metadata() const { return package_->metadata; }

void AOTIRunner::load(const ReadPackage& read, const AOTIRunnerOptions& options) {
  device_ = runner_device(options.device);
  // As a count: a size_t over int64's range is refused too, not wrapped to a negative.
  // The number given, in the message (clamped only where it has no int64 value).
  AOTIRunnerOptions::check_num_models(static_cast<std::int64_t>(
      std::min<std::size_t>(options.num_models, static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()))));
  num_models_ = options.num_models;
  admission_ = std::make_unique<Admission>(num_models_);
  package_ = read(device_);
  name_ = package_->label;
  open_library();
  create_container();
  load_weights();
  check_weights_loaded();
  read_signature();
  record_inputs(options.require_input_records);
  record_outputs();
  // The library is mapped and the weights copied: on the CPU nothing reads the files again, so
  // they go now (a crash later leaves nothing behind). CUDA kernels may load from the folder.
  if (device_.is_cpu()) package_->dir.remove();
}

void AOTIRunner::open_library() {
  const detail::ExtractedFile& library = package_->library;
  detail::check_torch_release(library.path, name_);
  dl_ = detail::load_library(library.path, library.record, name_ + ": cannot load the model library");
  load_symbol(dl_, name_, "AOTInductorModelContainerCreateWithDevice", api_->create);
  load_symbol(dl_, name_, "AOTInductorModelContainerDelete", api_->destroy);
  load_symbol(dl_, name_, "AOTInductorModelContainerRun", api_->run);
  load_symbol(dl_, name_, "AOTInductorModelContainerGetNumInputs", api_->num_inputs);
  load_symbol(dl_, name_, "AOTInductorModelContainerGetNumOutputs", api_->num_outputs);
  load_symbol(dl_, name_, "AOTInductorModelContainerGetCallSpec", api_->call_spec);
  load_symbol(dl_, name_, "AOTInductorModelContainerGetNumConstants", api_->num_constants, false);
  load_symbol(dl_, name_, "AOTInductorModelContainerGetConstantFromFolded", api_->constant_from_folded, false);
  load_symbol(dl_, name_, "AOTInductorModelContainerExtractConstantsMapEntries", api_->constants, false);
  load_symbol(dl_, name_, "AOTInductorModelContainerGetConstantsBlobSize", api_->blob_size, false);
  load_symbol(dl_, name_, "AOTInductorModelUpdateConstantsFromBlob", api_->update_from_blob, false);
  load_symbol(dl_, name_, "AOTInductorGetLastError", api_->last_error, false);
  load_symbol(dl_, name_, "AOTInductorModelContainerGetInputName", api_->input_name, false);
}

PackageError AOTIRunner::model_failure(const std::string& what) const {
  const char* msg = nullptr;
  std::string why = api_->last_error && api_->last_error(&msg) == AOTI_RUNTIME_SUCCESS && msg && *msg
                        ? std::string(msg)
                        : "the model's message is on stderr";
  return PackageError(name_ + ": " + what + ": " + why);
}

void AOTIRunner::create_container() {
  const std::string& cubin_dir = package_->dir.path();
  if (api_->create(&container_, num_models_, device_.str().c_str(), device_.is_cpu() ? nullptr : cubin_dir.c_str()) !=
          AOTI_RUNTIME_SUCCESS ||
      container_ == nullptr)
    throw model_failure("cannot create the model");
}

void AOTIRunner::load_weights() {
  if (!package_->weights) return;
  // Weights outside the library (package_constants_in_so=False): hand the model the blob, which
  // it copies (torch's loader does the same).
  detail::WeightBlob& weights = *package_->weights;
  std::uint64_t need = 0;
  if (!api_->blob_size || !api_->update_from_blob || api_->blob_size(container_, &need) != AOTI_RUNTIME_SUCCESS)
    throw model_failure("the package has a weight blob, but the library does not take one");
  if (weights.record.size < need)
    throw PackageError(weights.label + ": " + std::to_string(weights.record.size) +
                       " bytes, the model's weights take " + std::to_string(need));
  if (need > 0) {
    std::optional<Mapping> mapped;  // an extracted blob; one read into memory is used in place
    if (weights.file) mapped.emplace(*weights.file, need, weights.label);
    const auto* data = mapped ? mapped->data() : reinterpret_cast<const std::uint8_t*>(weights.bytes.data());
    if (api_->update_from_blob(container_, data) != AOTI_RUNTIME_SUCCESS)
      throw model_failure("cannot load the weight blob");
  }
  std::string().swap(weights.bytes);  // freed (assigning an empty string keeps the buffer): the container copied them
}

void AOTIRunner::check_weights_loaded() const {
  if (!api_->num_constants || !api_->constant_from_folded || !api_->constants) return;
  // Every constant the model reads as given (not folded at its first run) must be loaded: a
  // library whose weights live outside it, in a package without the blob, would read nothing.
  std::size_t n = 0, given = 0;
  if (api_->num_constants(container_, &n) != AOTI_RUNTIME_SUCCESS) return;
  for (std::size_t i = 0; i < n; ++i) {
    bool folded = false;
    if (api_->constant_from_folded(container_, i, &folded) == AOTI_RUNTIME_SUCCESS && !folded) ++given;
  }
  const AOTInductorConstantMapEntry* entries = nullptr;
  std::size_t loaded = 0;
  if (given > 0 && (api_->constants(container_, &entries, &loaded, false) != AOTI_RUNTIME_SUCCESS || loaded < given))
    throw PackageError(name_ + ": the model's weights are not loaded: it keeps " + std::to_string(given) +
                       " constants outside its library and the package has no *.wrapper_weights.blob");
}

void AOTIRunner::read_signature() {
  if (api_->num_inputs(container_, &num_inputs_) != AOTI_RUNTIME_SUCCESS ||
      api_->num_outputs(container_, &num_outputs_) != AOTI_RUNTIME_SUCCESS)
    throw model_failure("cannot read the model's input/output counts");
  const char* in_spec = nullptr;
  const char* out_spec = nullptr;
  if (api_->call_spec(container_, &in_spec, &out_spec) != AOTI_RUNTIME_SUCCESS)
    throw model_failure("cannot read the call spec");
  in_spec_ = in_spec ? in_spec : "";
  out_spec_ = out_spec ? out_spec : "";
}

std::vector<std::string> AOTIRunner::input_names() const {
  std::vector<std::string> names;
  for (std::size_t i = 0; api_->input_name && i < num_inputs_; ++i) {
    const char* input = nullptr;
    if (api_->input_name(container_, i, &input) != AOTI_RUNTIME_SUCCESS || input == nullptr) return {};
    names.emplace_back(input);
  }
  return names;
}

void AOTIRunner::record_inputs(bool require_input_records) {
  // The library's own input names tie the source's records to this library.
  const auto& source = package_->source;
  recorded_inputs_ = detail::recorded_inputs_from_wrapper(source ? source->text : std::string_view(), num_inputs_,
                                                          source ? source->label : name_, input_names());
  input_checks_ = std::make_unique<detail::InputChecks>(recorded_inputs_, device_, name_);
  std::string missing = unrecorded(recorded_inputs_);
  if (missing.empty()) return;
  std::string why = name_ + ": the package records no dtype or shape for " + missing +
                    (source ? " in its *.wrapper.cpp" : " (it has no *.wrapper.cpp)") +
                    ": only the input count, device, layout and storage are checked";
  if (require_input_records) throw PackageError(why + " (AOTIRunnerOptions::require_input_records)");
  TORCH_WARN(why, "; AOTIRunnerOptions::require_input_records (Python: require_input_records=True) refuses such "
             "a package");
}

void AOTIRunner::record_outputs() {
  const auto& source = package_->source;
  output_checks_ = std::make_unique<detail::OutputChecks>(
      source ? detail::recorded_outputs_from_wrapper(source->text, source->label)
             : std::vector<detail::RecordedOutput>(),
      *package_->executor, device_, input_checks_->numbers(), input_checks_->symbols());
}

std::vector<at::Tensor> AOTIRunner::run(const std::vector<at::Tensor>& inputs, void* stream) {
  return run_with(inputs, package_->executor.get(), stream);
}

#ifdef USE_CUDA
std::vector<at::Tensor> AOTIRunner::run(const std::vector<at::Tensor>& inputs, const c10::cuda::CUDAStream& stream) {
  if (stream.device() != device_)
    throw CallError(name_ + ": the stream is on " + stream.device().str() + ", the model runs on " + device_.str());
  return run_with(inputs, package_->executor.get(), static_cast<void*>(stream.stream()));
}
#endif

namespace {

// Takes each distinct output handle once: a model returning one tensor in two slots (`y, y`)
// writes the same handle twice, and both slots get the same tensor.
std::vector<at::Tensor> take_outputs(const std::vector<AtenTensorHandle>& out) {
  std::vector<at::Tensor> result(out.size());
  // A handle seen before: a scan over the earlier slots for the few outputs a model usually has,
  // an index beyond that (a model with many outputs would make the scan quadratic).
  constexpr std::size_t kScanLimit = 16;
  std::unordered_map<AtenTensorHandle, std::size_t> first;
  auto earlier = [&](std::size_t k) -> std::optional<std::size_t> {
    if (out.size() <= kScanLimit) {
      for (std::size_t j = 0; j < k; ++j)
        if (out[j] == out[k]) return j;
      return std::nullopt;
    }
    auto [it, fresh] = first.emplace(out[k], k);
    return fresh ? std::nullopt : std::optional<std::size_t>(it->second);
  };
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (out[k] == nullptr) continue;
    if (auto j = earlier(k)) {
      result[k] = result[*j];
      continue;
    }
    auto* p = reinterpret_cast<at::Tensor*>(out[k]);
    result[k] = std::move(*p);
    delete p;
  }
  return result;
}

}  // namespace

std::vector<at::Tensor> AOTIRunner::run_with(const std::vector<at::Tensor>& inputs,
                                             torch::aot_inductor::ProxyExecutor* executor, void* stream_handle) {
  if (stream_handle != nullptr && device_.is_cpu())
    throw UnsupportedError(name_ + ": a stream was given, but the model runs on the CPU");
  thread_local detail::SymbolValues symbols;
  input_checks_->check(inputs, symbols);
  AOTInductorStreamHandle stream = nullptr;
#ifdef USE_CUDA
  // The model's kernels and the extern calls (ops the executor calls through the dispatcher, which
  // take the current stream) all run on one stream: the one given, made current for the run.
  std::optional<c10::cuda::CUDAGuard> guard;
  std::optional<c10::cuda::CUDAStreamGuard> stream_guard;
  if (device_.is_cuda()) {
    guard.emplace(device_.index());
    c10::cuda::CUDAStream s = stream_handle != nullptr
                                  ? c10::cuda::getStreamFromExternal(static_cast<cudaStream_t>(stream_handle),
                                                                     device_.index())
                                  : c10::cuda::getCurrentCUDAStream(device_.index());
    stream_guard.emplace(s);
    stream = reinterpret_cast<AOTInductorStreamHandle>(s.stream());
  }
#endif
  // The model steals the input handles: give it fresh ones.
  std::vector<AtenTensorHandle> in(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) in[i] = reinterpret_cast<AtenTensorHandle>(new at::Tensor(inputs[i]));
  std::vector<AtenTensorHandle> out(num_outputs_, nullptr);
  // Each extern call's outputs are checked after it, whichever executor made it.
  detail::CheckedExecutor checked(executor, *output_checks_, *package_->executor, symbols);
  torch::aot_inductor::ProxyExecutor* called = output_checks_->empty() ? executor : &checked;
  Admission::Ticket admitted(*admission_);
  ProxyExecutor::take_last_error();
  clear_shim_error();
  auto status = api_->run(container_, in.data(), in.size(), out.data(),
                          out.size(), stream, reinterpret_cast<AOTIProxyExecutorHandle>(called));
  if (auto error = checked.first_error()) {
    take_outputs(out);
    std::rethrow_exception(error);
  }
  if (status != AOTI_RUNTIME_SUCCESS) {
    take_outputs(out);
    if (auto error = ProxyExecutor::take_last_error()) std::rethrow_exception(error);
    // The model's own message, then ATen's message for a C-shim call of its own that failed
    // (the model reports only "API call failed at wrapper.cpp, line N").
    const char* msg = nullptr;
    std::string why = api_->last_error && api_->last_error(&msg) == AOTI_RUNTIME_SUCCESS && msg && *msg
                          ? std::string(msg)
                          : std::string();
    if (std::string aten = shim_error(); !aten.empty() && why.find(aten) == std::string::npos)
      why += (why.empty() ? "" : ": ") + aten;
    if (!why.empty()) throw ModelError(name_ + ": the model failed: " + why);
    throw ModelError(name_ + ": the model failed (its message is on stderr)");
  }
  // torch 2.11's and 2.12's wrappers ignore the proxy executor's status (docs/torch-compat.md): an
  // extern call that failed left its outputs unwritten and the model ran on. Its error is raised.
  if (auto error = ProxyExecutor::take_last_error()) {
    take_outputs(out);
    std::rethrow_exception(error);
  }
  return take_outputs(out);
}

}  // namespace externspec
