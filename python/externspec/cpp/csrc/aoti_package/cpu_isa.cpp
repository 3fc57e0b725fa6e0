#include "aoti_package/cpu_isa.h"

#include <sys/utsname.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include <externspec/messages.h>

namespace externspec::detail {
namespace {

struct IsaEntry {
  std::string_view token, machine, capability, features;
};

constexpr IsaEntry kIsas[] = {
#define ES_CPU_ISA(token, machine, capability, features) {#token, #machine, #capability, features},
#include <externspec/torch/cpu_isa.def>
#undef ES_CPU_ISA
};

struct CapabilityEntry {
  std::string_view name;
  int rank;
};

constexpr CapabilityEntry kCapabilities[] = {
#define ES_CPU_CAPABILITY(name, rank) {#name, rank},
#include <externspec/torch/cpu_isa.def>
#undef ES_CPU_CAPABILITY
};

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string joined(const std::vector<std::string>& items, std::string_view sep = " ") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : std::string(sep)) + item;
  return out;
}

const IsaEntry* find_isa(std::string_view token, std::string_view machine) {
  for (const auto& e : kIsas)
    if (e.token == token && e.machine == machine) return &e;
  return nullptr;
}

// The rank of capability `name`; -1 when the table does not list it (ignored, as torch ignores it).
int capability_rank(std::string_view name) {
  for (const auto& c : kCapabilities)
    if (c.name == name) return c.rank;
  return -1;
}

bool machine_listed(std::string_view machine) {
  for (const auto& e : kIsas)
    if (e.machine == machine) return true;
  return false;
}

// The features of `entry` that `host` lacks.
std::vector<std::string> lacking(const IsaEntry& entry, const std::set<std::string>& features) {
  std::vector<std::string> out;
  for (auto& f : words(entry.features))
    if (!features.count(f)) out.push_back(f);
  return out;
}

// /proc/cpuinfo's features of the first CPU: x86's `flags` line, aarch64's `Features` line.
std::optional<std::set<std::string>> read_features(std::string& unread) {
  std::ifstream in("/proc/cpuinfo");
  if (!in) {
    unread = std::string("/proc/cpuinfo: ") + std::strerror(errno);
    return std::nullopt;
  }
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto key = words(line.substr(0, colon));
    if (key.size() == 1 && (key[0] == "flags" || key[0] == "Features")) {
      auto list = words(std::string_view(line).substr(colon + 1));
      return std::set<std::string>(list.begin(), list.end());
    }
  }
  unread = message(Message::CPU_FEATURES_NOT_LISTED);
  return std::nullopt;
}

// Whether `host` has every feature of `entry` and allows its capability.
bool runs(const IsaEntry& entry, const HostCpu& host) {
  const bool has = words(entry.features).empty() || (host.features && lacking(entry, *host.features).empty());
  const int cap = capability_rank(host.capability);
  return has && (cap < 0 || capability_rank(entry.capability) <= cap);
}

}  // namespace

HostCpu host_cpu() {
  struct Fixed {
    std::string machine;
    std::optional<std::set<std::string>> features;
    std::string unread;
  };
  static const Fixed fixed = [] {
    Fixed f;
    utsname name{};
    if (uname(&name) == 0) f.machine = name.machine;
    f.features = read_features(f.unread);
    return f;
  }();
  const char* capability = std::getenv("ATEN_CPU_CAPABILITY");
  return HostCpu{fixed.machine, fixed.features, fixed.unread, capability ? capability : ""};
}

std::optional<std::string> cpu_isa_refusal(const std::string& machine, const std::string& isa, const HostCpu& host) {
  if (!machine.empty() && machine != host.machine)
    return message(Message::CPU_ISA_OTHER_MACHINE, {{"package_machine", machine}, {"machine", host.machine}});
  const auto tokens = words(isa);
  if (tokens.empty() || !machine_listed(host.machine)) return std::nullopt;
  std::vector<std::string> unknown;
  std::vector<const IsaEntry*> entries;
  for (const auto& t : tokens) {
    if (const IsaEntry* e = find_isa(t, host.machine)) entries.push_back(e);
    else unknown.push_back(t);
  }
  if (!unknown.empty())
    return message(Message::CPU_ISA_UNKNOWN, {{"isa", isa}, {"unknown", joined(unknown)}, {"machine", host.machine}});
  bool needs_features = false;
  for (const auto* e : entries) needs_features = needs_features || !words(e->features).empty();
  if (needs_features && !host.features)
    return message(Message::CPU_ISA_UNREAD, {{"isa", isa}, {"reason", host.unread}});
  std::vector<std::string> missing;
  for (const auto* e : entries)
    for (auto& f : lacking(*e, *host.features)) missing.push_back(f);
  if (!missing.empty())
    return message(Message::CPU_ISA_LACKING, {{"isa", isa}, {"host_isa", host_isa(host)}, {"lacking", joined(missing, ", ")}});
  const int cap = capability_rank(host.capability);
  if (cap < 0) return std::nullopt;
  std::vector<std::string> capped;
  for (const auto* e : entries)
    if (capability_rank(e->capability) > cap) capped.emplace_back(e->token);
  if (!capped.empty())
    return message(Message::CPU_ISA_CAPPED, {{"isa", isa}, {"capability", host.capability}, {"tokens", joined(capped)}});
  return std::nullopt;
}

std::string host_isa(const HostCpu& host) {
  std::vector<std::string> tokens;
  for (const auto& e : kIsas)
    if (e.machine == host.machine && runs(e, host)) tokens.emplace_back(e.token);
  return joined(tokens);
}

}  // namespace externspec::detail
