// What a file given as a package is, from its member names: an AOTInductor package, or something a
// user may take for one (an ExportedProgram from torch.export.save, a TorchScript archive, a file of
// torch.save, another zip, not a zip). The Python twin is python/externspec/file_kind.py; both read
// the kinds, their member patterns and their sentences from include/externspec/torch/file_kinds.def.
#pragma once

#include <string>
#include <vector>

#include <externspec/torch/errors.h>

#include "aoti_package/zip_reader.h"

namespace externspec::detail {

// The kind of a zip archive whose members have these (full) names: "aoti_package",
// "exported_program", "torchscript", "torch_save" or "other_zip".
std::string archive_kind(const std::vector<std::string>& names);

// The PackageError for `path`, a file of `kind` (not "aoti_package"): what it is and what to do,
// with `kind` set as data.
PackageError not_a_package(const std::string& path, const std::string& kind);

// Opens torch's reader on `zip`; an archive it refuses is named by what it is when that is not a
// package (not_a_package), else PackageError with torch's reason.
void open_archive(ZipArchive& zip);

}  // namespace externspec::detail
