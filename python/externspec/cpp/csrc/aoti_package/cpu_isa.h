// The CPU instructions a package's model library needs, checked before the library is opened: torch
// compiles it for the vector ISA of the machine that compiles it (`-march=native` and, say, AVX-512)
// and records that ISA in the package's metadata (`AOTI_CPU_ISA`); run on a CPU without those
// instructions it dies with SIGILL at its first run, taking the process (a Triton server) with it.
// The table of ISAs is include/externspec/torch/cpu_isa.def, which Python's externspec/cpu_isa.py
// reads too; the rule is the same function in both (tests/aoti/test_cpu_isa.py runs one body over both).
#pragma once

#include <optional>
#include <set>
#include <string>

namespace externspec::detail {

// This machine as the check sees it.
struct HostCpu {
  std::string machine;                            // uname's machine ("x86_64")
  std::optional<std::set<std::string>> features;  // /proc/cpuinfo's CPU features; nullopt: not read
  std::string unread;                             // why `features` could not be read
  std::string capability;                         // ATEN_CPU_CAPABILITY ("" when unset)
};

// This machine: its features read once per process (they do not change), ATEN_CPU_CAPABILITY at
// each call (a test, or a process that sets it before loading, sees its own value).
HostCpu host_cpu();

// Why a package compiled for `machine` and `isa` (its metadata's AOTI_MACHINE and AOTI_CPU_ISA, ""
// when absent) cannot run on `host`, as a sentence; nullopt when it can, or when nothing is recorded
// or `host` is a machine the table does not list (nothing to check against).
std::optional<std::string> cpu_isa_refusal(const std::string& machine, const std::string& isa, const HostCpu& host);

// The table's tokens that `host` runs, in the table's order ("INVALID_VEC_ISA AVX2"), for messages.
std::string host_isa(const HostCpu& host);

}  // namespace externspec::detail
