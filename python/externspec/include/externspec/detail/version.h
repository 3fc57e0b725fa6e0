// The version policy on load (Python: externspec.wire.version).
// Part of externspec.h, which includes it where the generated declarations it needs are
// visible; not a header to include on its own.
#pragma once

namespace externspec {
namespace detail {

inline std::string version_text(std::int64_t major, std::int64_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// The two version policies (docs/versioning.md); the IDL's `version_policy` annotation picks one
// per document type and the generated `VersionPolicy<T>` specializations (externspec.h) derive from it.

// version_policy = "externspec": the document carries externspec's own optional schema_version.
// Without one the file is torch-written (read under 1.0, unknown keys ignored). Same major
// required; a newer minor is read only when it carries nothing unknown to this reader.
template <class T>
struct ExternspecVersioned {
  static constexpr bool forbid_unknown = true;

  // A newer major needs a newer externspec; an older one needs the Python upgraders first (the C++
  // decoder has none): the message names the command.
  static void check_major(std::int64_t major, std::int64_t minor) {
    // Majors start at 1 and minors at 0 (Python: externspec.wire.version._check_range).
    if (major < 1 || minor < 0)
      throw VersionError("$.schema_version", message(Message::NOT_A_SCHEMA_VERSION,
                                                     {{"version", version_text(major, minor)}, {"first_major", "1"}}));
    if (major == SCHEMA_VERSION.major) return;
    const std::string remedy =
        major > SCHEMA_VERSION.major
            ? message(Message::UPGRADE_EXTERNSPEC)
            : message(Message::UPGRADE_THE_FILE, {{"command", message(Message::UPGRADE_COMMAND)}});
    throw VersionError("$.schema_version",
                       message(Message::OTHER_MAJOR, {{"version", version_text(major, minor)},
                                                      {"major", std::to_string(major)},
                                                      {"reader", version_text(SCHEMA_VERSION.major,
                                                                              SCHEMA_VERSION.minor)},
                                                      {"reader_major", std::to_string(SCHEMA_VERSION.major)},
                                                      {"remedy", remedy}}));
  }

  static void check(const T& doc) {
    if (doc.schema_version) check_major(doc.schema_version->major, doc.schema_version->minor);
  }

  // The document's version as Python's json.loads would see it (bools are ints there).
  template <class V>
  static std::optional<std::pair<std::int64_t, std::int64_t>> raw_version(const V& root) {
    if (root.kind() != JsonKind::Object) return std::nullopt;
    std::optional<V> version;
    root.for_each_member([&](std::string_view k, const V& m) {
      if (k == "schema_version") version = m;
    });
    if (!version || version->kind() != JsonKind::Object) return std::nullopt;
    std::optional<std::int64_t> major, minor;
    version->for_each_member([&](std::string_view k, const V& m) {
      std::optional<std::int64_t> x;
      if (m.kind() == JsonKind::Int) x = m.get_int();
      else if (m.kind() == JsonKind::Bool) x = m.get_bool() ? 1 : 0;
      if (k == "major") major = x;
      else if (k == "minor") minor = x;
    });
    if (!major || !minor) return std::nullopt;
    return std::make_pair(*major, *minor);
  }

  static void check_raw(std::optional<std::pair<std::int64_t, std::int64_t>> version, const std::vector<Issue>& issues) {
    if (!version) return;
    check_major(version->first, version->second);
    if (version->second <= SCHEMA_VERSION.minor) return;
    for (const auto& issue : issues) {
      if (issue.kind != IssueKind::Unknown) continue;
      throw VersionError("$" + issue.path,
                         message(Message::UNKNOWN_KEY_OF_NEWER_MINOR,
                                 {{"key", issue.key},
                                  {"reader", version_text(SCHEMA_VERSION.major, SCHEMA_VERSION.minor)},
                                  {"version", version_text(version->first, version->second)}}),
                         issue.key);
    }
  }
};

// version_policy = "torch_export": the schema_version is torch's export schema, checked against
// the major the IDL mirrors (TorchMajor); 0.0 means unversioned, as in torch.
template <class T, std::int64_t TorchMajor>
struct TorchExportVersioned {
  static constexpr bool forbid_unknown = false;
  static void check(const T& doc) {
    const auto& v = doc.schema_version;
    if ((v.major != 0 || v.minor != 0) && v.major != TorchMajor)
      throw VersionError("$.schema_version", message(Message::OTHER_TORCH_EXPORT_MAJOR,
                                                     {{"version", version_text(v.major, v.minor)},
                                                      {"major", std::to_string(TorchMajor)}}));
  }
  template <class V>
  static std::optional<std::pair<std::int64_t, std::int64_t>> raw_version(const V&) {
    return std::nullopt;
  }
  static void check_raw(std::optional<std::pair<std::int64_t, std::int64_t>>, const std::vector<Issue>&) {}
};

}  // namespace detail
}  // namespace externspec
