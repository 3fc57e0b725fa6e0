#include "aoti_package/file_kind.h"

#include <fnmatch.h>

#include <string_view>

#include "aoti_package/package_layout.h"

namespace externspec::detail {
namespace {

constexpr std::string_view kCompile = "torch._inductor.aoti_compile_and_package";

// Matched as Python's fnmatchcase matches file_kind.py's patterns (`*` crosses `/`).
bool has(const std::vector<std::string>& names, const char* pattern) {
  for (const auto& name : names)
    if (fnmatch(pattern, name.c_str(), 0) == 0) return true;
  return false;
}

// file_kind.KINDS: what the file is; what to do.
std::string describe(const std::string& kind) {
  const std::string compile(kCompile);
  const std::string export_then = "export the model with torch.export.export and compile it with " + compile;
  if (kind == "exported_program")
    return "an ExportedProgram saved by torch.export.save, not an AOTInductor package; compile it into one with " +
           compile + "(torch.export.load(path), package_path=...)";
  if (kind == "torchscript")
    return "a TorchScript archive (torch.jit.save), not an AOTInductor package; " + export_then;
  if (kind == "torch_save") return "a file saved by torch.save, not an AOTInductor package; " + export_then;
  if (kind == "not_zip")
    return "not a zip archive (a .pt2 file is one): truncated or not a .pt2; a package is the file " + compile +
           " writes";
  return "a zip archive that is not an AOTInductor package (it has no */data/aotinductor/*/*.wrapper.so); a "
         "package is the file " +
         compile + " writes";
}

}  // namespace

std::string archive_kind(const std::vector<std::string>& names) {
  for (const std::string& pattern : model_patterns())
    if (has(names, pattern.c_str())) return "aoti_package";
  if (has(names, exported_program_pattern().c_str())) return "exported_program";
  if (has(names, "*/code/*") || has(names, "*/constants.pkl")) return "torchscript";
  if (has(names, "*/data.pkl")) return "torch_save";
  return "other_zip";
}

PackageError not_a_package(const std::string& path, const std::string& kind) {
  PackageError error(path + ": " + describe(kind));
  error.kind = kind;
  return error;
}

void open_archive(ZipArchive& zip) {
  try {
    zip.open();
  } catch (const PackageError&) {
    const std::string kind = archive_kind(zip.names());
    if (kind != "aoti_package") throw not_a_package(zip.name(), kind);  // say what the file is instead
    throw;
  }
}

}  // namespace externspec::detail
