#include "aoti_package/file_kind.h"

#include <fnmatch.h>

#include <string_view>

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
  for (const KindMember& m : kKindMembers)
    if (has(names, m.pattern)) return std::string(m.kind);
  return "other_zip";
}

PackageError not_a_package(const std::string& path, const std::string& kind) {
  PackageError error(path + ": " + describe(kind));
  error.kind = kind;
  return error;
}

}  // namespace externspec::detail
