// The torch release that compiled a model library, from the names it imports (C-shim functions) and
// exports (C entry points): a package compiled by a newer torch may call shim functions an older
// libtorch lacks, which the dynamic loader would report as an `undefined symbol` naming neither torch.
#pragma once

#include <string>

namespace externspec::detail {

// Throws PackageError, starting `label`, when the model library at `file` imports `aoti_torch_*`
// functions this process's libtorch does not export: it names the torch release that compiled the
// library (the newest release whose names it imports or exports: "torch 2.15 or later"), this one,
// and each missing function with the release that added it. Returns when none is missing; a file
// that is not an ELF64 shared library, or whose tables are malformed, is a PackageError
// (elf_symbols.h).
void check_torch_release(const std::string& file, const std::string& label);

}  // namespace externspec::detail
