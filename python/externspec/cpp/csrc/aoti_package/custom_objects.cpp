#include "aoti_package/custom_objects.h"

#include <c10/util/Exception.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <externspec/wire.h>
#include <externspec/torch/errors.h>

#include "aoti_package/package_layout.h"
#include "aoti_package/string_object.h"

namespace externspec::detail {

std::vector<std::pair<std::string, std::string>> listed_custom_objects(ZipArchive& package, const std::string& model_name) {
  const std::string config = custom_objects_config(model_name);
  if (!package.has(config)) return {};
  const std::string label = package.label(config);
  std::vector<std::pair<std::string, std::string>> out;
  // Read whether or not the objects are loaded (a package that lists objects is refused without
  // the option), so with the metadata's bounded reader and limit.
  for (const auto& [name, f] :
       string_object(package.read(config, kSmallJsonLimit), label, "torch's list of a model's torchbind objects")) {
    if (f.empty() || f == "." || f == ".." || f.find('/') != std::string::npos || f.find('\\') != std::string::npos)
      throw PackageError(label + ": the file of `" + name + "` is `" + f + "`, not a plain file name");
    const std::string member = constant_member(f);
    if (!package.has(member))
      throw PackageError(label + ": the object `" + name + "` is in " + member + ", which the package lacks");
    out.emplace_back(name, member);
  }
  return out;
}

void load_custom_objects(ZipArchive& package, const std::vector<std::pair<std::string, std::string>>& listed,
                         std::uint64_t limit, CustomObjects& objects) {
  for (const auto& [name, member] : listed) {
    if (objects.count(name)) continue;  // given by the caller: used as given
    const std::string bytes = package.read(member, limit);
    // A TorchScript archive (a zip, what torch writes) is inflated by torch's unpickler: its
    // directory is checked as the package's, and what it records is held to the same limit.
    if (bytes.compare(0, 4, "PK\x03\x04", 4) == 0) {
      std::uint64_t inflated = 0;
      for (const auto& [inner, record] : archive_members(bytes, package.label(member))) {
        if (record.size > limit - inflated)
          throw PackageError(package.label(member) + ": torchbind object `" + name + "`: its archive records more " +
                             "than " + std::to_string(limit) + " bytes (at `" + inner +
                             "`; Limits::max_custom_object_bytes)");
        inflated += record.size;
      }
    }
    c10::IValue obj;
    try {
      obj = torch::jit::pickle_load_obj(bytes);
    } catch (const std::exception& e) {
      const auto* ce = dynamic_cast<const c10::Error*>(&e);
      throw PackageError(package.label(member) + ": cannot unpickle torchbind object `" + name +
                         "`: " + (ce ? ce->what_without_backtrace() : e.what()) +
                         " (is the library that registers its class loaded? AOTIRunnerOptions::op_libraries)");
    }
    if (!obj.isCustomClass())
      throw PackageError(package.label(member) + ": object `" + name + "` is a " + obj.tagKind() +
                         ", not a torchbind object");
    objects.emplace(name, std::move(obj));
  }
}

}  // namespace externspec::detail
