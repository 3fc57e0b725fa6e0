// The entry points Triton Inference Server calls in libtriton_externspec.so (triton_api.h), over
// load_model and execute (model_state.h). A model that cannot load is refused with the runner's
// reason (the server marks it UNAVAILABLE with that message and keeps serving the others); a request
// that fails gets an error response; nothing a package or a request does escapes as an exception.
#include <string>

#include "model_state.h"
#include "triton_errors.h"

using externspec::triton::guarded;
using externspec::triton::ModelState;

namespace {

struct InstanceState {
  ModelState* model;
};

}  // namespace

extern "C" {

TRITONSERVER_Error* TRITONBACKEND_Initialize(TRITONBACKEND_Backend*) {
  std::uint32_t major = 0, minor = 0;
  if (TRITONSERVER_Error* error = TRITONBACKEND_ApiVersion(&major, &minor)) return error;
  if (major != kTritonBackendApiMajor || minor < kTritonBackendApiMinor)
    return externspec::triton::new_error(
        TRITONSERVER_ERROR_UNSUPPORTED,
        "externspec backend: the server's backend API is " + std::to_string(major) + "." + std::to_string(minor) +
            ", this backend was built for " + std::to_string(kTritonBackendApiMajor) + "." +
            std::to_string(kTritonBackendApiMinor) + " (the major must be equal, the minor at least that)");
  return nullptr;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model) {
  return guarded(TRITONSERVER_ERROR_INVALID_ARG, "externspec backend: ", [&] {
    auto state = externspec::triton::load_model(model);
    externspec::triton::check(TRITONBACKEND_ModelSetState(model, state.get()), "keeping the model state");
    state.release();
  });
}

TRITONSERVER_Error* TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model) {
  void* state = nullptr;
  if (TRITONSERVER_Error* error = TRITONBACKEND_ModelState(model, &state)) return error;
  delete static_cast<ModelState*>(state);
  return nullptr;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance* instance) {
  return guarded(TRITONSERVER_ERROR_INTERNAL, "externspec backend: ", [&] {
    TRITONBACKEND_Model* model = nullptr;
    externspec::triton::check(TRITONBACKEND_ModelInstanceModel(instance, &model), "finding the instance's model");
    void* state = nullptr;
    externspec::triton::check(TRITONBACKEND_ModelState(model, &state), "finding the model state");
    auto* mine = new InstanceState{static_cast<ModelState*>(state)};
    if (TRITONSERVER_Error* error = TRITONBACKEND_ModelInstanceSetState(instance, mine)) {
      delete mine;
      externspec::triton::check(error, "keeping the instance state");
    }
  });
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance* instance) {
  void* state = nullptr;
  if (TRITONSERVER_Error* error = TRITONBACKEND_ModelInstanceState(instance, &state)) return error;
  delete static_cast<InstanceState*>(state);
  return nullptr;
}

// Every request is answered and released here, so this returns no error (the server would then
// release requests the backend may already have answered).
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceExecute(TRITONBACKEND_ModelInstance* instance,
                                                       TRITONBACKEND_Request** requests, const std::uint32_t count) {
  void* state = nullptr;
  if (TRITONSERVER_Error* error = TRITONBACKEND_ModelInstanceState(instance, &state)) return error;
  externspec::triton::execute(*static_cast<InstanceState*>(state)->model, instance, requests, count);
  return nullptr;
}

}  // extern "C"
