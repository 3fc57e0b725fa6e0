// The package loader (as torch names its own: aoti_package/model_package_loader.h, AOTIModelPackageLoader):
// loading an AOTInductor package for one device, apart from running it (torch splits the same way:
// its AOTIModelPackageLoader reads and extracts the package, its per-device
// AOTIModelContainerRunner opens the library and runs the container). `load_package` does
// everything that reads the package: the members are verified, the small ones read and checked
// (the extern-kernel file planned into the proxy executor, the metadata against the device, the
// wrapper source read for the input records), and then the files the model needs are written,
// within the byte budget, into a private directory. AOTIRunner (aoti_runner.cpp) takes the result,
// opens the library, creates the container and runs it.
//
// The extern-kernel file is planned here, not in the runner as torch does: planning checks the
// package against this process's ops, and a package that fails it is refused before anything is
// written to disk.
#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <optional>
#include <string>

#include <externspec/torch/aoti_runner.h>
#include <externspec/torch/proxy_executor.h>

#include "aoti_package/temp_dir.h"
#include "aoti_package/zip_reader.h"

namespace externspec::detail {

// A member written to disk.
struct ExtractedFile {
  std::string path;   // the file
  std::string label;  // `package!member`, for messages
  MemberRecord record;
};

// A member read into memory.
struct MemberText {
  std::string label;  // `package!member`, for messages
  std::string text;
};

// The weight blob (`*.wrapper_weights.blob`): extracted to a file, mapped when the container is made;
// or, from a package given as bytes, read into memory (so that only the library is written).
struct WeightBlob {
  std::string label;  // `package!member`, for messages
  MemberRecord record;
  std::optional<std::string> file;  // extracted here, else in `bytes`
  std::string bytes;                // verified against `record`; freed once the container has copied them
};

struct LoadedPackage {
  std::string label;  // `package!member` of the library, naming the model in messages
  std::unique_ptr<ProxyExecutor> executor;  // the extern-kernel file, planned for the device
  std::string metadata;  // `*.wrapper_metadata.json` as text ("" if absent)
  std::optional<MemberText> source;  // `*.wrapper.cpp`: what records the inputs' dtypes and shapes
  // Holds the extracted files. The library and weights are read once, when the container is made;
  // GPU kernels are loaded from it by file name while the model runs.
  TempDir dir;
  ExtractedFile library;
  std::optional<WeightBlob> weights;
};

// Loads `options.op_libraries` (the extern-kernel file may name their ops), then reads the
// package's model `options.model_name` for `device` (resolved: a CUDA device has its index).
// Throws what AOTIRunner's constructor documents for the package: PackageError, DecodeError,
// VersionError, SpecMismatchError, UnsupportedError (compiled for another device).
std::unique_ptr<LoadedPackage> load_package(const std::string& path, const AOTIRunnerOptions& options,
                                            const c10::Device& device);
// The same from memory, with the same checks; the weight blob is read into memory, not written.
std::unique_ptr<LoadedPackage> load_package(const PackageBytes& bytes, const AOTIRunnerOptions& options,
                                            const c10::Device& device);

}  // namespace externspec::detail
