// A shared library (a package's model library, an op library), loaded once per process per content.
//
// A model library cannot be unloaded: its STB_GNU_UNIQUE symbols make the dynamic loader mark it
// NODELETE (torch's own loader has the same property), so dlclose leaves it mapped. Loading a
// package's copy of it under a fresh temporary name each time mapped it again (1,000 load/close
// cycles of one package: +6,000 mappings, +286 MiB). Here each library that was loaded is kept
// with an open descriptor on its (deleted) file, and a library whose bytes equal one already
// loaded (same size and CRC-32, then compared byte for byte: a colliding CRC gets no other
// model's code) gets that handle back: loading the same model again maps nothing new. Distinct
// libraries stay mapped until the process ends. An op library is shared by content too: the same
// library at a second path (a redeploy into a versioned folder, a copy per model folder) loaded
// again ran its TORCH_LIBRARY initializer twice, which throws, and the process aborted.
#pragma once

#include <functional>
#include <string>

#include "aoti_package/zip_reader.h"

namespace externspec::detail {

// Returns the dlopen (RTLD_NOW | RTLD_LOCAL) handle of the library at `file`, whose size and CRC-32
// are `record` (verified against its package for a model library; read for an op library), which
// also find a library of the same bytes loaded before: shared with every other user of the same
// bytes. Thread-safe. Throws PackageError starting `failure` ("<label>: cannot load the model
// library") when the library cannot be opened or loaded. `before_open`, when given, runs just before
// the library is opened (not when the same bytes were loaded before), and may refuse it by throwing.
void* load_library(const std::string& file, const MemberRecord& record, const std::string& failure,
                   const std::function<void()>& before_open = {});

}  // namespace externspec::detail
