#include "aoti_package/file_kind.h"

#include <fnmatch.h>

#include <string_view>

#include "aoti_package/package_layout.h"

namespace externspec::detail {
namespace {

struct KindMember {
  std::string_view kind;
  const char* pattern;  // matched as Python's fnmatchcase matches it (`*` crosses `/`)
};

struct FileKind {
  std::string_view kind, what, todo;
};

constexpr KindMember kKindMembers[] = {
#define ES_KIND_MEMBER(kind, pattern) {#kind, pattern},
#include <externspec/torch/file_kinds.def>
#undef ES_KIND_MEMBER
};

constexpr FileKind kFileKinds[] = {
#define ES_FILE_KIND(kind, what, todo) {#kind, what, todo},
#include <externspec/torch/file_kinds.def>
#undef ES_FILE_KIND
};

bool has(const std::vector<std::string>& names, const char* pattern) {
  for (const auto& name : names)
    if (fnmatch(pattern, name.c_str(), 0) == 0) return true;
  return false;
}

// file_kinds.def: what the file is; what to do.
std::string describe(const std::string& kind) {
  for (const FileKind& k : kFileKinds)
    if (k.kind == kind) return k.todo.empty() ? std::string(k.what) : std::string(k.what) + "; " + std::string(k.todo);
  return kind;
}

}  // namespace

std::string archive_kind(const std::vector<std::string>& names) {
  // A package's model members and the ExportedProgram's document are the package layout's
  // (package_layout.def); the other kinds' members are file_kinds.def's.
  for (const std::string& pattern : model_patterns())
    if (has(names, pattern.c_str())) return "aoti_package";
  if (has(names, exported_program_pattern().c_str())) return "exported_program";
  for (const KindMember& m : kKindMembers)
    if (has(names, m.pattern)) return std::string(m.kind);
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
