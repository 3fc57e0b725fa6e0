// One Triton model: its runner (one AOTIRunner with num_models = the config's instance count, so the
// instances share one copy of the weights), what the package says about its tensors, and the final
// config's inputs and outputs. Made by TRITONBACKEND_ModelInitialize, shared by its instances.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <externspec/torch/aoti_runner.h>

#include "model_config.h"
#include "package_facts.h"
#include "triton_api.h"

namespace externspec::triton {

struct ModelState {
  std::string name;
  std::string dir;  // the model's folder in the repository (a server path: kept out of client texts)
  std::unique_ptr<AOTIRunner> runner;
  PackageFacts facts;
  std::vector<ConfigTensor> inputs, outputs;  // as the final config states them
  std::int64_t max_batch_size = 0;
};

// Loads the package of `model` (its version's model.pt2), completes the config when the server asks
// for it, and refuses a config that contradicts the package (ConfigError naming the field).
std::unique_ptr<ModelState> load_model(TRITONBACKEND_Model* model);

// Serves `requests` on `instance`: reads and checks each request's inputs, merges what can run as one
// batch, runs it, splits the outputs back, answers and releases every request.
void execute(ModelState& model, TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
             std::uint32_t count);

}  // namespace externspec::triton
