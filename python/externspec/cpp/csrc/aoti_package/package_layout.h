// The package layout (include/externspec/torch/package_layout.def, which the Python readers read
// too, through externspec/package_layout.py): which members of an AOTInductor package make a
// model, where its torchbind objects are. Knows names only; reading them is the zip reader's.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "aoti_package/zip_reader.h"

namespace externspec::detail {

// The members of one model (names inside the package's top folder).
struct ModelMembers {
  std::string library;                  // data/aotinductor/<model>/<stem>.wrapper.so
  std::optional<std::string> spec;      // <stem>.wrapper.json (extern-kernel nodes)
  std::optional<std::string> source;    // <stem>.wrapper.cpp
  std::optional<std::string> metadata;  // <stem>.wrapper_metadata.json
  std::optional<std::string> weights;   // <stem>.wrapper_weights.blob
  std::vector<std::string> kernels;     // data/aotinductor/<model>/*.cubin, *.fatbin (GPU kernels)
};

// The members of model `model_name` among an archive's `members`. Throws PackageError naming
// `label` (the archive) and the models it has when there is not exactly one library, or naming a
// model name that is not a plain folder name.
ModelMembers model_members(const std::map<std::string, MemberRecord>& members, const std::string& model_name,
                           const std::string& label);

// The member listing the model's torchbind objects (torch's `custom_objs_config.json`).
std::string custom_objects_config(const std::string& model_name);

// The member holding a constant (a torchbind object's pickle) of file name `file`.
std::string constant_member(const std::string& file);

// The patterns (fnmatch, `*` crossing `/`, over names with the top folder) of the members whose
// presence makes an archive an AOTInductor package: a model's library, source or extern-kernel file.
std::vector<std::string> model_patterns();

// The pattern (the same way) of the exported programs torch.export.save writes (ES_DOCUMENT's
// ExportedProgram).
std::string exported_program_pattern();

}  // namespace externspec::detail
