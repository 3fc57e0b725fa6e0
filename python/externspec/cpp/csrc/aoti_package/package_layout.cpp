#include "aoti_package/package_layout.h"

#include <set>
#include <string_view>

#include <externspec/torch/errors.h>

#include "aoti_package/string_object.h"

namespace externspec::detail {
namespace {

#define ES_FOLDER(name, path) constexpr std::string_view folder_##name = path;
#define ES_MODEL_FILE(role, suffix) constexpr std::string_view file_##role = suffix;
#define ES_MODEL_CONFIG(role, name) constexpr std::string_view config_##role = name;
#include <externspec/torch/package_layout.def>

constexpr std::string_view kKernels[] = {
#define ES_MODEL_KERNEL(suffix) suffix,
#include <externspec/torch/package_layout.def>
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Whether `name` is a file directly inside folder `dir` (which ends with `/`).
bool directly_in(std::string_view name, std::string_view dir) {
  return name.substr(0, dir.size()) == dir && name.find('/', dir.size()) == std::string_view::npos;
}

bool plain_folder_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos;
}

// The models of the archive: the folders of `models` that hold a library.
std::string models_in(const std::map<std::string, MemberRecord>& members) {
  std::set<std::string> models;
  for (const auto& [name, record] : members) {
    std::string_view n = name;
    if (n.substr(0, folder_models.size()) != folder_models || !ends_with(n, file_library)) continue;
    auto end = n.find('/', folder_models.size());
    if (end != std::string_view::npos) models.emplace(n.substr(folder_models.size(), end - folder_models.size()));
  }
  std::string have;
  for (const auto& m : models) have += (have.empty() ? "" : ", ") + ticked(m);
  return have.empty() ? std::string("none") : have;
}

}  // namespace

ModelMembers model_members(const std::map<std::string, MemberRecord>& members, const std::string& model_name,
                           const std::string& label) {
  if (!plain_folder_name(model_name))
    throw PackageError("model name " + ticked(model_name) + " is not a plain folder name");
  const std::string dir = std::string(folder_models) + model_name + "/";
  std::vector<std::string> found;
  for (const auto& [name, record] : members)
    if (directly_in(name, dir) && ends_with(name, file_library)) found.push_back(name);
  if (found.size() != 1)
    throw PackageError(label + ": expected one " + dir + "*" + std::string(file_library) + ", found " +
                       std::to_string(found.size()) + " (models in the package: " + models_in(members) + ")");
  ModelMembers out;
  out.library = found.front();
  const std::string stem = out.library.substr(0, out.library.size() - file_library.size());
  auto member = [&](std::string_view suffix) -> std::optional<std::string> {
    std::string name = stem + std::string(suffix);
    if (members.count(name)) return name;
    return std::nullopt;
  };
  out.spec = member(file_spec);
  out.source = member(file_source);
  out.metadata = member(file_metadata);
  out.weights = member(file_weights);
  for (const auto& [name, record] : members)
    for (std::string_view suffix : kKernels)
      if (directly_in(name, dir) && ends_with(name, suffix)) out.kernels.push_back(name);
  return out;
}

std::string custom_objects_config(const std::string& model_name) {
  return std::string(folder_models) + model_name + "/" + std::string(config_custom_objects);
}

std::string constant_member(const std::string& file) { return std::string(folder_constants) + file; }

std::vector<std::string> model_patterns() {
  const std::string folder = "*/" + std::string(folder_models) + "*/*";
  return {folder + std::string(file_library), folder + std::string(file_source), folder + std::string(file_spec)};
}

std::string exported_program_pattern() {
  std::string out;
#define ES_DOCUMENT(folder, pattern, type) \
  if (std::string_view(#type) == "ExportedProgram") out = "*/" + std::string(folder_##folder) + pattern;
#include <externspec/torch/package_layout.def>
  return out;
}

}  // namespace externspec::detail
