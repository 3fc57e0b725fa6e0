#include "aoti_package/model_package_loader.h"

#include <cstdint>
#include <vector>

#include <externspec/torch/errors.h>

#include "aoti_package/cpu_isa.h"
#include "aoti_package/custom_objects.h"
#include "aoti_package/fixed_limits.h"
#include "aoti_package/file_kind.h"
#include "aoti_package/package_layout.h"
#include "aoti_package/string_object.h"
#include "aoti_package/wrapper_calls.h"

namespace externspec::detail {
namespace {

// The objects the extern calls may name: those given in `options.custom_objects`, and the
// package's own others, unpickled with `load_custom_objects`, else refused (before anything is
// unpickled) naming the option.
CustomObjects custom_objects(ZipArchive& package, const AOTIRunnerOptions& options) {
  CustomObjects objects = options.custom_objects;
  const auto listed = listed_custom_objects(package, options.model_name);
  if (options.load_custom_objects) {
    load_custom_objects(package, listed, options.limits.max_custom_object_bytes, objects);
    return objects;
  }
  std::string missing;
  for (const auto& [name, member] : listed)
    if (!objects.count(name)) missing += (missing.empty() ? "`" : ", `") + name + "`";
  if (!missing.empty())
    throw PackageError(package.label(custom_objects_config(options.model_name)) +
                       ": the model's extern calls use torchbind objects the package holds (" + missing +
                       "); loading them unpickles package data, which runs code of their classes: pass "
                       "AOTIRunnerOptions::load_custom_objects = true (Python: load_custom_objects=True; Triton: "
                       "the model's parameter load_custom_objects, \"true\") for a package you trust, or "
                       "give the objects in custom_objects");
  return objects;
}

// The extern-kernel file (within the decoder's byte limit) planned for `device`, which replaces
// every serialized `as_device` (torch's proxy executor does so too), in the call layout of the
// option, else of the calls the wrapper source states (none: "auto" decides at the calls). A model
// without one makes no extern calls.
std::unique_ptr<ProxyExecutor> plan_spec(ZipArchive& package, const ModelMembers& members, CustomObjects objects,
                                         const c10::Device& device, const AOTIRunnerOptions& options,
                                         const std::optional<MemberText>& source) {
  std::string spec = members.spec ? package.read(*members.spec, options.limits.max_json_bytes) : R"({"nodes": []})";
  std::optional<std::vector<CallLengths>> calls;
  if (source) calls = wrapper_call_lengths(source->text);
  try {
    return std::make_unique<ProxyExecutor>(spec, std::move(objects), std::vector<std::string>{}, device,
                                           options.call_layout, calls, options.limits);
  } catch (const DecodeError& e) {
    throw DecodeError(e.errors(), e.truncated(), package.label(*members.spec));
  }
}

// The package's metadata is a flat JSON object of strings (`"AOTI_DEVICE_KEY": "cpu", ...`), as
// torch writes it and its own loader reads it: anything else is refused, not skimmed. Returns the
// value of `key`, "" when there is none.
std::string metadata_value(const std::vector<std::pair<std::string, std::string>>& fields, const std::string& key) {
  for (const auto& [k, value] : fields)
    if (k == key) return value;
  return {};
}

// The metadata as text ("" when absent), checked before the library is opened: a model compiled for
// another device is refused, and one compiled for CPU instructions this machine lacks (its host code
// runs on the CPU whatever the device), which would die with SIGILL at its first run.
std::string read_metadata(ZipArchive& package, const ModelMembers& members, const std::string& model,
                          const c10::Device& device) {
  if (!members.metadata) return {};
  std::string metadata = package.read(*members.metadata, kSmallJsonLimit);
  const auto fields = string_object(metadata, package.label(*members.metadata), "a package's metadata");
  std::string key = metadata_value(fields, "AOTI_DEVICE_KEY");
  if (!key.empty() && key != c10::DeviceTypeName(device.type(), /*lower_case=*/true))
    throw UnsupportedError(model + ": the model was compiled for " + key + ", not for device " + device.str());
  if (auto refusal = cpu_isa_refusal(metadata_value(fields, "AOTI_MACHINE"), metadata_value(fields, "AOTI_CPU_ISA"),
                                     host_cpu())) {
    PackageError e(model + ": " + *refusal);
    e.kind = "cpu_isa";
    throw e;
  }
  return metadata;
}

// The members written to disk: the library, its weights and, off the CPU, its GPU kernels.
std::vector<std::string> members_to_extract(const ModelMembers& members, const c10::Device& device) {
  std::vector<std::string> out{members.library};
  if (members.weights) out.push_back(*members.weights);
  if (!device.is_cpu()) out.insert(out.end(), members.kernels.begin(), members.kernels.end());
  return out;
}

// Refuses, before anything is written, members whose recorded sizes take the total over the limit.
void check_extracted_size(const ZipArchive& package, const std::vector<std::string>& members,
                          const AOTIRunnerOptions& options) {
  const std::uint64_t given = options.limits.max_extracted_bytes;
  std::uint64_t budget = given ? given : fixed::extracted_bytes_per_package_byte * package.file_size();
  std::uint64_t total = 0;
  for (const auto& m : members) {
    std::uint64_t n = package.size(m);
    if (n > budget - total)
      throw PackageError(package.label(m) + ": " + std::to_string(n) + " bytes would take the extracted size over " +
                         "the limit of " + std::to_string(budget) + " bytes (Limits::max_extracted_bytes)");
    total += n;
  }
}

ExtractedFile extract(ZipArchive& package, const std::string& member, const std::string& file) {
  package.extract(member, file);
  return ExtractedFile{file, package.label(member), package.record(member)};
}

// Writes the model's files into `loaded.dir` under names chosen here (a kernel keeps its file
// name: the library loads it by that name from its folder); the weight blob only when
// `!weights_in_memory` (else it is read, within the budget check_extracted_size applied).
void extract_model(ZipArchive& package, const ModelMembers& members, const c10::Device& device,
                   bool weights_in_memory, LoadedPackage& loaded) {
  const std::string& dir = loaded.dir.path();
  if (members.weights) {
    const std::string& member = *members.weights;
    WeightBlob& blob = loaded.weights.emplace(WeightBlob{package.label(member), package.record(member), {}, {}});
    if (weights_in_memory) blob.bytes = package.read(member, blob.record.size);
    else blob.file = extract(package, member, dir + "/model.wrapper_weights.blob").path;
  }
  if (!device.is_cpu())
    for (const auto& k : members.kernels) package.extract(k, dir + "/" + k.substr(k.rfind('/') + 1));
  loaded.library = extract(package, members.library, dir + "/model.wrapper.so");
}

// The model `options.model_name` of the package in `package`, read, checked and extracted.
std::unique_ptr<LoadedPackage> load_model(ZipArchive& package, const AOTIRunnerOptions& options,
                                          const c10::Device& device, bool weights_in_memory) {
  open_archive(package);
  if (auto kind = archive_kind(package.names()); kind != "aoti_package") throw not_a_package(package.name(), kind);
  const ModelMembers members = model_members(package.members(), options.model_name, package.name());
  const std::string label = package.label(members.library);
  // Everything small is read and checked before the private directory is made and written to.
  std::optional<MemberText> source;
  if (members.source)
    source = MemberText{package.label(*members.source), package.read(*members.source, options.limits.max_source_bytes)};
  auto executor = plan_spec(package, members, custom_objects(package, options), device, options, source);
  std::string metadata = read_metadata(package, members, label, device);
  check_extracted_size(package, members_to_extract(members, device), options);
  auto loaded = std::make_unique<LoadedPackage>();
  loaded->label = label;
  loaded->executor = std::move(executor);
  loaded->metadata = std::move(metadata);
  loaded->source = std::move(source);
  extract_model(package, members, device, weights_in_memory, *loaded);
  return loaded;
}

}  // namespace

// Op libraries first, in both: the ops and classes the extern-kernel file names may come from them.
std::unique_ptr<LoadedPackage> load_package(const std::string& path, const AOTIRunnerOptions& options,
                                            const c10::Device& device) {
  load_op_libraries(options.op_libraries);
  ZipArchive package(path);
  return load_model(package, options, device, /*weights_in_memory=*/false);
}

std::unique_ptr<LoadedPackage> load_package(const PackageBytes& bytes, const AOTIRunnerOptions& options,
                                            const c10::Device& device) {
  load_op_libraries(options.op_libraries);
  ZipArchive package(bytes.bytes, bytes.name);
  return load_model(package, options, device, /*weights_in_memory=*/true);
}

}  // namespace externspec::detail
