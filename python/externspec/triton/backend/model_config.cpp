#include "model_config.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "datatypes.h"

namespace externspec::triton {
namespace {

using nlohmann::json;

// protobuf's JSON writes int64 fields as strings ("dims": ["4"]) and reads either.
std::int64_t as_int(const json& value, const std::string& field) {
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_string()) {
    try {
      std::size_t used = 0;
      std::int64_t k = std::stoll(value.get<std::string>(), &used);
      if (used == value.get<std::string>().size()) return k;
    } catch (const std::exception&) {
    }
  }
  throw ConfigError(field + ": expected an integer, got " + value.dump());
}

std::string parameter(const json& config, const std::string& key) {
  auto params = config.find("parameters");
  if (params == config.end() || !params->contains(key)) return "";
  const json& entry = (*params)[key];
  if (!entry.is_object() || !entry.contains("string_value") || !entry["string_value"].is_string())
    throw ConfigError("parameters." + key + ": expected { string_value: \"...\" }");
  return entry["string_value"].get<std::string>();
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// The enum's own names (externspec.h), as es.cpp.AOTIRunner's `call_layout` takes them; "auto": unset.
std::optional<CallLayout> call_layout(const std::string& text) {
  if (text.empty() || text == "auto") return std::nullopt;
  for (const auto& [layout, name] : EnumInfo<CallLayout>::entries)
    if (text == name) return layout;
  throw ConfigError("parameters.call_layout: expected \"auto\", \"NODE_ARGUMENTS\" or \"OMITTED_DEFAULTS_PASSED\", "
                    "got \"" + text + "\"");
}

bool flag(const std::string& text, const std::string& key) {
  if (text.empty() || text == "false") return false;
  if (text == "true") return true;
  throw ConfigError("parameters." + key + ": expected \"true\" or \"false\", got \"" + text + "\"");
}

// The instances and their device: KIND_CPU, or KIND_GPU in a build with CUDA (the first GPU listed).
void read_instances(const json& config, AOTIRunnerOptions& options) {
  std::size_t count = 0;
  for (const json& group : config.value("instance_group", json::array())) {
    std::string kind = group.value("kind", "KIND_CPU");
    std::int64_t n = group.contains("count") ? as_int(group["count"], "instance_group.count") : 1;
    if (kind == "KIND_GPU") {
#ifdef USE_CUDA
      auto gpus = group.value("gpus", json::array());
      options.device = "cuda:" + std::to_string(gpus.empty() ? 0 : as_int(gpus[0], "instance_group.gpus"));
      n *= std::max<std::int64_t>(1, static_cast<std::int64_t>(gpus.size()));
#else
      throw ConfigError("instance_group.kind: KIND_GPU needs a backend built against a CUDA build of torch; this one "
                        "runs KIND_CPU only");
#endif
    } else if (kind != "KIND_CPU" && kind != "KIND_AUTO") {
      throw ConfigError("instance_group.kind: " + kind + " is not served (KIND_CPU, KIND_GPU)");
    }
    count += static_cast<std::size_t>(std::max<std::int64_t>(n, 0));
  }
  if (count > AOTIRunnerOptions::kMaxNumModels)
    throw ConfigError("instance_group.count: " + std::to_string(count) + " instances in all, more than the " +
                      std::to_string(AOTIRunnerOptions::kMaxNumModels) + " model instances one runner holds");
  options.num_models = std::max<std::size_t>(count, 1);  // no instance_group: Triton's one instance
}

}  // namespace

ModelSettings read_settings(const json& config, const std::string& model_dir) {
  ModelSettings settings;
  for (const std::string& path : split_list(parameter(config, "op_libraries"))) {
    std::filesystem::path p(path);
    settings.options.op_libraries.push_back(p.is_absolute() ? path : (std::filesystem::path(model_dir) / p).string());
  }
  settings.options.call_layout = call_layout(parameter(config, "call_layout"));
  settings.options.load_custom_objects = flag(parameter(config, "load_custom_objects"), "load_custom_objects");
  read_instances(config, settings.options);
  if (config.contains("max_batch_size")) settings.max_batch_size = as_int(config["max_batch_size"], "max_batch_size");
  return settings;
}

std::vector<ConfigTensor> config_tensors(const json& config, const char* field) {
  std::vector<ConfigTensor> tensors;
  for (const json& entry : config.value(field, json::array())) {
    std::string name = entry.value("name", "");
    std::string where = std::string(field) + " `" + name + "`";
    auto dtype = from_config_type(entry.value("data_type", ""));
    if (!dtype) throw ConfigError(where + ": data_type " + entry.value("data_type", "(none)") + " is not served");
    std::vector<std::int64_t> dims;
    for (const json& d : entry.value("dims", json::array())) dims.push_back(as_int(d, where + ".dims"));
    tensors.push_back({name, *dtype, dims});
  }
  return tensors;
}

}  // namespace externspec::triton
