// A package's torchbind objects (AOTIRunnerOptions::load_custom_objects): torch lists them in
// `data/aotinductor/<model>/custom_objs_config.json`, a JSON object from the name the extern calls
// use (`as_custom_obj.name`) to a member of `data/constants/` holding the object's TorchScript
// pickle. Listing reads only that JSON; loading unpickles, with torch's own loader (what torch's
// AOTIModelPackageLoader does).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <externspec/torch/proxy_executor.h>

#include "aoti_package/zip_reader.h"

namespace externspec::detail {

// (name, member) for each object the package lists, in the file's order; empty when the package
// has no config. Throws PackageError: a config that is not a JSON object of plain file names, or
// names a member the package lacks.
std::vector<std::pair<std::string, std::string>> listed_custom_objects(ZipArchive& package, const std::string& model_name);

// Unpickles each listed object not already in `objects` into it. Throws PackageError naming the
// member: over `limit` bytes, not an unpicklable TorchScript object (a class not registered in this
// process included), or not a torchbind object.
void load_custom_objects(ZipArchive& package, const std::vector<std::pair<std::string, std::string>>& listed,
                         std::uint64_t limit, CustomObjects& objects);

}  // namespace externspec::detail
