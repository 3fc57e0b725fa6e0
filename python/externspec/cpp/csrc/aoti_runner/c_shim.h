// The torch release a model library needs, from the C-shim functions it calls: a package compiled by
// a newer torch may call shim functions an older libtorch lacks, which the dynamic loader would
// report as an `undefined symbol` naming neither torch.
#pragma once

#include <string>

namespace externspec::detail {

// Throws PackageError, starting `label`, naming the torch release that compiled the model library at
// `file` (the newest release whose C-shim functions it calls: "torch 2.13 or later") and this one,
// when the library calls `aoti_torch_*` functions this process's libtorch does not export. Returns
// when it calls none such, or when `file` is not an ELF64 shared library (dlopen then says why).
void check_c_shim(const std::string& file, const std::string& label);

}  // namespace externspec::detail
