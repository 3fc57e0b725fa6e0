#include <externspec/torch/aoti_runner.h>

#include <torch/csrc/inductor/aoti_runtime/interface.h>

#include <dlfcn.h>

#include <stdexcept>

#include <externspec/torch/errors.h>

namespace externspec {

struct AOTIRunner::Api {
  decltype(&AOTInductorModelContainerCreateWithDevice) create = nullptr;
  decltype(&AOTInductorModelContainerDelete) destroy = nullptr;
  decltype(&AOTInductorModelContainerRun) run = nullptr;
  decltype(&AOTInductorModelContainerGetNumInputs) num_inputs = nullptr;
  decltype(&AOTInductorModelContainerGetNumOutputs) num_outputs = nullptr;
  decltype(&AOTInductorModelContainerGetCallSpec) call_spec = nullptr;
};

namespace {

template <class F>
void load_symbol(void* dl, const std::string& library, const char* name, F& out) {
  dlerror();
  void* p = dlsym(dl, name);
  if (p == nullptr)
    throw std::runtime_error(library + ": not an AOTInductor model library: symbol `" + name + "` is missing");
  out = reinterpret_cast<F>(p);
}

std::string shape_text(const at::Tensor& t) {
  std::string out = "[";
  for (std::size_t d = 0; d < static_cast<std::size_t>(t.dim()); ++d) out += (d ? ", " : "") + std::to_string(t.size(d));
  return out + "]";
}

std::string shape_text(const InputShape& s) {
  std::string out = "[";
  for (std::size_t d = 0; d < s.size(); ++d) out += (d ? ", " : "") + (s[d] ? std::to_string(*s[d]) : std::string("*"));
  return out + "]";
}

}  // namespace

AOTIRunner::AOTIRunner(const std::string& library, std::string_view spec_json, CustomObjects custom_objects,
                       std::vector<std::optional<InputShape>> input_shapes)
    : library_(library), api_(std::make_unique<Api>()), input_shapes_(std::move(input_shapes)) {
  // Decode and validate the spec before touching the library: a bad spec is the likelier error.
  executor_ = std::make_unique<ProxyExecutor>(spec_json, std::move(custom_objects));
  dl_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (dl_ == nullptr) {
    const char* err = dlerror();
    throw std::runtime_error("cannot load " + library + ": " + (err ? err : "dlopen failed"));
  }
  try {
    load_symbol(dl_, library, "AOTInductorModelContainerCreateWithDevice", api_->create);
    load_symbol(dl_, library, "AOTInductorModelContainerDelete", api_->destroy);
    load_symbol(dl_, library, "AOTInductorModelContainerRun", api_->run);
    load_symbol(dl_, library, "AOTInductorModelContainerGetNumInputs", api_->num_inputs);
    load_symbol(dl_, library, "AOTInductorModelContainerGetNumOutputs", api_->num_outputs);
    load_symbol(dl_, library, "AOTInductorModelContainerGetCallSpec", api_->call_spec);
    AOTInductorModelContainerHandle h = nullptr;
    if (api_->create(&h, 1, "cpu", nullptr) != AOTI_RUNTIME_SUCCESS || h == nullptr)
      throw std::runtime_error(library + ": AOTInductorModelContainerCreateWithDevice failed (see stderr)");
    container_ = h;
    if (api_->num_inputs(h, &num_inputs_) != AOTI_RUNTIME_SUCCESS ||
        api_->num_outputs(h, &num_outputs_) != AOTI_RUNTIME_SUCCESS)
      throw std::runtime_error(library + ": cannot read the model's input/output counts");
    const char* in_spec = nullptr;
    const char* out_spec = nullptr;
    if (api_->call_spec(h, &in_spec, &out_spec) != AOTI_RUNTIME_SUCCESS)
      throw std::runtime_error(library + ": cannot read the model's call spec");
    in_spec_ = in_spec ? in_spec : "";
    out_spec_ = out_spec ? out_spec : "";
    if (!input_shapes_.empty() && input_shapes_.size() != num_inputs_)
      throw std::runtime_error(library + ": " + std::to_string(input_shapes_.size()) +
                               " input shapes given for a model with " + std::to_string(num_inputs_) + " inputs");
  } catch (...) {
    if (container_) api_->destroy(static_cast<AOTInductorModelContainerHandle>(container_));
    dlclose(dl_);
    throw;
  }
}

AOTIRunner::~AOTIRunner() {
  if (container_) api_->destroy(static_cast<AOTInductorModelContainerHandle>(container_));
  if (dl_) dlclose(dl_);
}

void AOTIRunner::check_inputs(const std::vector<at::Tensor>& inputs) const {
  if (inputs.size() != num_inputs_)
    throw CallError(library_ + ": the model takes " + std::to_string(num_inputs_) + " inputs, got " +
                    std::to_string(inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& t = inputs[i];
    if (!t.defined()) throw CallError(library_ + ": input " + std::to_string(i) + " is an undefined tensor");
    if (input_shapes_.empty() || !input_shapes_[i]) continue;
    const InputShape& want = *input_shapes_[i];
    bool ok = static_cast<std::size_t>(t.dim()) == want.size();
    for (std::size_t d = 0; ok && d < want.size(); ++d) ok = !want[d] || *want[d] == t.size(static_cast<int64_t>(d));
    if (!ok)
      throw CallError(library_ + ": input " + std::to_string(i) + " has shape " + shape_text(t) +
                      ", the model was compiled for " + shape_text(want) + " (* = dynamic)");
  }
}

std::vector<at::Tensor> AOTIRunner::run(const std::vector<at::Tensor>& inputs) {
  return run_with(inputs, executor_.get());
}

std::vector<at::Tensor> AOTIRunner::run_with(const std::vector<at::Tensor>& inputs,
                                             torch::aot_inductor::ProxyExecutor* executor) {
  check_inputs(inputs);
  // The model steals the input handles: give it fresh ones.
  std::vector<AtenTensorHandle> in(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) in[i] = reinterpret_cast<AtenTensorHandle>(new at::Tensor(inputs[i]));
  std::vector<AtenTensorHandle> out(num_outputs_, nullptr);
  ProxyExecutor::take_last_error();
  auto status = api_->run(static_cast<AOTInductorModelContainerHandle>(container_), in.data(), in.size(), out.data(),
                          out.size(), nullptr, reinterpret_cast<AOTIProxyExecutorHandle>(executor));
  if (status != AOTI_RUNTIME_SUCCESS) {
    for (auto h : out) delete reinterpret_cast<at::Tensor*>(h);
    if (auto error = ProxyExecutor::take_last_error()) std::rethrow_exception(error);
    throw std::runtime_error(library_ + ": AOTInductorModelContainerRun failed (the model's message is on stderr)");
  }
  std::vector<at::Tensor> result;
  result.reserve(out.size());
  for (auto h : out) {
    auto* p = reinterpret_cast<at::Tensor*>(h);
    result.push_back(std::move(*p));
    delete p;
  }
  return result;
}

}  // namespace externspec
