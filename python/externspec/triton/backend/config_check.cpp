// complete_config and check_config (model_config.h): the config against what the package says.
#include <algorithm>
#include <string>

#include "datatypes.h"
#include "model_config.h"

namespace externspec::triton {
namespace {

using nlohmann::json;

// Triton's default batch limit when a backend completes max_batch_size (its onnxruntime backend's too).
constexpr std::int64_t kDefaultMaxBatchSize = 4;

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string text = "[";
  for (std::size_t d = 0; d < dims.size(); ++d) text += (d ? ", " : "") + std::to_string(dims[d]);
  return text + "]";
}

json tensor_entry(const TensorFacts& facts, bool batched, const char* field) {
  if (!facts.dtype || !facts.dims)
    throw ConfigError(std::string(field) + " `" + facts.name + "`: the package records no data type or shape for it; "
                      "state `" + field + "` in config.pbtxt");
  auto type = config_type(*facts.dtype);
  if (!type) throw ConfigError(std::string(field) + " `" + facts.name + "`: its dtype has no Triton data type");
  std::vector<std::int64_t> dims(*facts.dims);
  if (batched && !dims.empty()) dims.erase(dims.begin());
  return json{{"name", facts.name}, {"data_type", *type}, {"dims", dims}};
}

json tensor_entries(const std::vector<TensorFacts>& tensors, bool batched, const char* field) {
  json entries = json::array();
  for (const TensorFacts& t : tensors) entries.push_back(tensor_entry(t, batched, field));
  return entries;
}

bool missing(const json& config, const char* field) {
  return !config.contains(field) || !config[field].is_array() || config[field].empty();
}

// One config tensor against the package's: the data type, and each dim the package fixes.
void check_tensor(const ConfigTensor& given, const TensorFacts& facts, bool batched, const char* field) {
  std::string where = std::string(field) + " `" + given.name + "`";
  if (facts.dtype && *facts.dtype != given.dtype)
    throw ConfigError(where + ".data_type: " + config_type(given.dtype).value_or("?") + " contradicts the package (" +
                      config_type(*facts.dtype).value_or("?") + ")");
  if (!facts.dims) return;
  std::vector<std::int64_t> dims(*facts.dims);
  if (batched && !dims.empty()) dims.erase(dims.begin());
  bool agree = dims.size() == given.dims.size();
  for (std::size_t d = 0; agree && d < dims.size(); ++d) agree = dims[d] == -1 || dims[d] == given.dims[d];
  if (!agree)
    throw ConfigError(where + ".dims: " + dims_text(given.dims) + " contradicts the package (" + dims_text(dims) +
                      (batched ? ", the batch dim excluded" : "") + "; -1 is a dynamic size)");
}

void check_tensors(const json& config, const std::vector<TensorFacts>& facts, bool batched, const char* field) {
  auto given = config_tensors(config, field);
  for (const ConfigTensor& t : given) {
    auto match = std::find_if(facts.begin(), facts.end(), [&](const TensorFacts& f) { return f.name == t.name; });
    if (match == facts.end()) {
      std::string names;
      for (const TensorFacts& f : facts) names += (names.empty() ? "" : ", ") + f.name;
      throw ConfigError(std::string(field) + " `" + t.name + "`: the package has no such " + field + " (it has " +
                        (names.empty() ? "none" : names) + ")");
    }
    check_tensor(t, *match, batched, field);
  }
  for (const TensorFacts& f : facts)
    if (std::none_of(given.begin(), given.end(), [&](const ConfigTensor& t) { return t.name == f.name; }))
      throw ConfigError(std::string(field) + ": the package's " + field + " `" + f.name + "` is missing from the config");
}

}  // namespace

// Whether some input or output is the batch dim alone (`idx: i64[B]`): batched, its config dims would
// be `[]`, which Triton refuses, so auto-complete leaves batching off for the package (issue 54 item 8).
bool batch_dim_alone(const PackageFacts& facts) {
  for (const auto* tensors : {&facts.inputs, &facts.outputs})
    for (const TensorFacts& t : *tensors)
      if (t.dims && t.dims->size() == 1) return true;
  return false;
}

bool complete_config(json& config, const PackageFacts& facts, bool max_batch_stated) {
  bool changed = false;
  std::int64_t max_batch = config.contains("max_batch_size") ? config["max_batch_size"].get<std::int64_t>() : 0;
  if (missing(config, "input") && !max_batch_stated && max_batch == 0 && facts.batch_dynamic &&
      !batch_dim_alone(facts)) {
    max_batch = std::min(kDefaultMaxBatchSize, facts.max_batch);
    config["max_batch_size"] = max_batch;
    if (!config.contains("dynamic_batching")) config["dynamic_batching"] = json::object();
    changed = true;
  }
  if (missing(config, "input")) {
    config["input"] = tensor_entries(facts.inputs, max_batch > 0, "input");
    changed = true;
  }
  if (missing(config, "output")) {
    if (!facts.outputs_unknown.empty())
      throw ConfigError("output: cannot be completed from the package (" + facts.outputs_unknown +
                        "); state `output` in config.pbtxt");
    config["output"] = tensor_entries(facts.outputs, max_batch > 0, "output");
    changed = true;
  }
  if (missing(config, "instance_group")) {
    config["instance_group"] = json::array({json{{"count", 1}, {"kind", "KIND_CPU"}}});
    changed = true;
  }
  return changed;
}

void check_config(const json& config, const PackageFacts& facts) {
  std::int64_t max_batch = config.contains("max_batch_size") ? config["max_batch_size"].get<std::int64_t>() : 0;
  if (max_batch > 0 && !facts.batch_dynamic)
    throw ConfigError("max_batch_size: " + std::to_string(max_batch) + " asks for batching, but the package has no "
                      "dynamic batch dim (" + facts.batch_static_reason + "); serve it with max_batch_size: 0");
  if (max_batch > facts.max_batch)
    throw ConfigError("max_batch_size: " + std::to_string(max_batch) + " is more than the package allows (" +
                      std::to_string(facts.max_batch) + ")");
  check_tensors(config, facts.inputs, max_batch > 0, "input");
  if (facts.outputs_unknown.empty()) check_tensors(config, facts.outputs, max_batch > 0, "output");
}

}  // namespace externspec::triton
