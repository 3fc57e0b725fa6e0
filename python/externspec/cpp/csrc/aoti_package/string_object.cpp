#include "aoti_package/string_object.h"

#include <set>

#include <externspec/externspec.h>
#include <externspec/torch/errors.h>

namespace externspec::detail {

std::string ticked(std::string_view s) {
  std::string out = "`";
  for (char c : s) out += c == '\0' ? std::string("\\0") : std::string(1, c);
  return out + "`";
}

std::vector<std::pair<std::string, std::string>> string_object(std::string_view json, const std::string& label,
                                                              const std::string& kind) {
  const std::string what = " (" + kind + " is a JSON object of strings)";
  if (json.size() > MAX_JSON_BYTES)
    throw PackageError(label + ": " + std::to_string(json.size()) + " bytes, over the JSON size limit of " +
                       std::to_string(MAX_JSON_BYTES) + " bytes");
  NlohmannBackend::Document doc;
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string_view> keys;  // views into the parsed document
  try {
    const auto root = doc.parse(json);
    if (root.kind() != JsonKind::Object) throw PackageError(label + ": not a JSON object" + what);
    root.for_each_member([&](std::string_view key, const auto& value) {
      if (value.kind() != JsonKind::String)
        throw PackageError(label + ": the value of " + ticked(key) + " is a JSON " + kind_name(value.kind()) +
                           ", not a string" + what);
      if (!keys.insert(key).second) throw PackageError(label + ": key " + ticked(key) + " appears more than once");
      out.emplace_back(key, value.get_string());
    });
  } catch (const Failure& f) {
    throw PackageError(label + ": not a JSON object" + what + ": " +
                       (f.issues.empty() ? std::string("invalid JSON") : f.issues.front().message));
  }
  return out;
}

}  // namespace externspec::detail
