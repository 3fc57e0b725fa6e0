// A Triton model's config.pbtxt (as the server hands it over: protobuf's JSON) against the package:
// the runner's options from the `parameters`, the instance count, the auto-completion of inputs,
// outputs and max_batch_size, and the refusal of a config that contradicts the package, naming the
// field.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <externspec/torch/aoti_runner.h>

#include "package_facts.h"

namespace externspec::triton {

struct ModelSettings {
  AOTIRunnerOptions options;       // op_libraries, call_layout, load_custom_objects, num_models, device
  std::int64_t max_batch_size = 0;
};

// A config the backend cannot serve (std::invalid_argument's message names the field).
class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// `model_dir`: relative op library paths are taken from there. Throws ConfigError.
ModelSettings read_settings(const nlohmann::json& config, const std::string& model_dir);

// Fills what the config leaves out from the package: inputs, outputs, max_batch_size (with a
// dynamic_batching section; only when config.pbtxt does not state it, `max_batch_stated`: protobuf's
// JSON drops a stated 0) and one CPU instance. Returns whether anything was added.
bool complete_config(nlohmann::json& config, const PackageFacts& facts, bool max_batch_stated);

// Throws ConfigError naming the first field that contradicts the package.
void check_config(const nlohmann::json& config, const PackageFacts& facts);

// One tensor as the config states it, batch dim excluded when max_batch_size > 0.
struct ConfigTensor {
  std::string name;
  c10::ScalarType dtype;
  std::vector<std::int64_t> dims;
};
std::vector<ConfigTensor> config_tensors(const nlohmann::json& config, const char* field);

}  // namespace externspec::triton
