#include "model_state.h"
#include "pbtxt.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "triton_errors.h"

namespace externspec::triton {
namespace {

using nlohmann::json;

json model_config(TRITONBACKEND_Model* model) {
  TRITONSERVER_Message* message = nullptr;
  check(TRITONBACKEND_ModelConfig(model, 1, &message), "reading the model config");
  const char* base = nullptr;
  size_t size = 0;
  TRITONSERVER_Error* error = TRITONSERVER_MessageSerializeToJson(message, &base, &size);
  json config = error ? json() : json::parse(std::string(base, size));
  if (TRITONSERVER_Error* deleted = TRITONSERVER_MessageDelete(message)) TRITONSERVER_ErrorDelete(deleted);
  check(error, "reading the model config");
  return config;
}

void set_model_config(TRITONBACKEND_Model* model, const json& config) {
  std::string text = config.dump();
  TRITONSERVER_Message* message = nullptr;
  check(TRITONSERVER_MessageNewFromSerializedJson(&message, text.data(), text.size()), "writing the model config");
  TRITONSERVER_Error* error = TRITONBACKEND_ModelSetConfig(model, 1, message);
  if (TRITONSERVER_Error* deleted = TRITONSERVER_MessageDelete(message)) TRITONSERVER_ErrorDelete(deleted);
  check(error, "setting the completed model config");
}

// `<repository>/<model>/<version>/model.pt2`, and the model's folder (relative op libraries).
std::pair<std::string, std::string> package_path(TRITONBACKEND_Model* model) {
  TRITONBACKEND_ArtifactType type;
  const char* location = nullptr;
  check(TRITONBACKEND_ModelRepository(model, &type, &location), "finding the model repository");
  if (type != TRITONBACKEND_ARTIFACT_FILESYSTEM)
    throw ConfigError("the model's repository is not on a file system, which the backend reads");
  std::uint64_t version = 0;
  check(TRITONBACKEND_ModelVersion(model, &version), "reading the model version");
  std::filesystem::path dir(location);
  return {(dir / std::to_string(version) / "model.pt2").string(), dir.string()};
}

// The model's config.pbtxt as written ("" when there is none: Triton then makes the config itself).
std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

std::unique_ptr<ModelState> load_model(TRITONBACKEND_Model* model) {
  auto state = std::make_unique<ModelState>();
  const char* name = nullptr;
  check(TRITONBACKEND_ModelName(model, &name), "reading the model name");
  state->name = name;
  json config = model_config(model);
  auto [package, dir] = package_path(model);
  state->dir = dir;
  ModelSettings settings = read_settings(config, dir);
  if (!std::filesystem::is_regular_file(package)) throw ConfigError("no package at " + package + " (model.pt2)");
  state->runner = std::make_unique<AOTIRunner>(package, settings.options);
  state->facts = package_facts(*state->runner);
  bool auto_complete = false;
  check(TRITONBACKEND_ModelAutoCompleteConfig(model, &auto_complete), "asking for auto-complete");
  if (auto_complete && complete_config(config, state->facts, states_max_batch_size(read_text(dir + "/config.pbtxt"))))
    set_model_config(model, config);
  check_config(config, state->facts);
  state->inputs = config_tensors(config, "input");
  state->outputs = config_tensors(config, "output");
  state->max_batch_size = config.value("max_batch_size", std::int64_t{0});
  log(TRITONSERVER_LOG_INFO, "externspec: model `" + state->name + "` loaded from " + package + " (" +
                                 std::to_string(state->runner->num_models()) + " model instances, max_batch_size " +
                                 std::to_string(state->max_batch_size) + ")");
  return state;
}

}  // namespace externspec::triton
