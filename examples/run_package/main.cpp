// Runs an AOTInductor package from C++ alone, twice on the same inputs: with externspec's runner
// (externspec::AOTIRunner: externspec's proxy executor serves the model's extern calls) and with
// torch's torch::inductor::AOTIModelPackageLoader; prints each output and whether the two agree.
//
//   run_package MODEL.pt2 INPUTS.pt [--ops LIBRARY.so]... [--save OUTPUTS.pt]
//
// INPUTS.pt is a list of tensors written by Python's torch.save (or torch::pickle_save). Each
// LIBRARY.so is a custom op library the package's extern calls need; externspec's runner loads it
// (AOTIRunnerOptions::op_libraries) before it plans the package's extern calls, as
// torch.ops.load_library would, and torch's loader then finds its ops registered. Without it, the
// runner refuses the package naming the op namespace it lacks. OUTPUTS.pt receives externspec's outputs
// (torch.load reads it). Exit status: 0 when both runners give equal outputs, 3 when they differ,
// 1 on an error (its message on stderr), 2 on bad usage.
#include <ATen/core/Formatting.h>
#include <ATen/ops/equal.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <externspec/torch/aoti_runner.h>

namespace {

struct Args {
  std::string package, inputs, save;
  std::vector<std::string> ops;
};

bool parse(int argc, char** argv, Args& args) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--ops" || a == "--save") && i + 1 < argc) {
      (a == "--ops" ? args.ops.emplace_back() : args.save) = argv[++i];
    } else if (a.rfind("--", 0) == 0) {
      return false;
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 2) return false;
  args.package = positional[0];
  args.inputs = positional[1];
  return true;
}

std::vector<at::Tensor> read_tensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue value = torch::jit::pickle_load(data);
  if (value.isTensorList()) return value.toTensorVector();
  if (!value.isList()) throw std::runtime_error(path + ": expected a list of tensors, got " + value.tagKind());
  std::vector<at::Tensor> tensors;
  for (const c10::IValue& item : value.toListRef()) {
    if (!item.isTensor()) throw std::runtime_error(path + ": expected a list of tensors, found a " + item.tagKind());
    tensors.push_back(item.toTensor());
  }
  return tensors;
}

bool same(const at::Tensor& a, const at::Tensor& b) {
  return a.defined() == b.defined() &&
         (!a.defined() || (a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() && at::equal(a, b)));
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse(argc, argv, args)) {
    std::cerr << "usage: " << argv[0] << " MODEL.pt2 INPUTS.pt [--ops LIBRARY.so]... [--save OUTPUTS.pt]\n";
    return 2;
  }
  try {
    std::vector<at::Tensor> inputs = read_tensors(args.inputs);
    externspec::AOTIRunnerOptions options;
    options.op_libraries = args.ops;
    externspec::AOTIRunner runner(args.package, options);
    std::vector<at::Tensor> ours = runner.run(inputs);
    torch::inductor::AOTIModelPackageLoader loader(args.package);
    std::vector<at::Tensor> theirs = loader.run(inputs);
    bool all_equal = ours.size() == theirs.size();
    std::cout << args.package << ": " << ours.size() << " outputs (torch's loader: " << theirs.size() << ")\n";
    for (std::size_t i = 0; i < ours.size() && i < theirs.size(); ++i) {
      bool equal = same(ours[i], theirs[i]);
      all_equal = all_equal && equal;
      std::cout << "output " << i << ": " << (equal ? "equal to torch's loader" : "DIFFERS from torch's loader")
                << "\n" << ours[i] << "\n";
    }
    if (!args.save.empty()) {
      // A tuple: torch.load's default (weights_only) reads it, unlike a TorchScript tensor list.
      std::vector<c10::IValue> items(ours.begin(), ours.end());
      std::vector<char> data = torch::jit::pickle_save(c10::ivalue::Tuple::create(std::move(items)));
      std::ofstream out(args.save, std::ios::binary);
      out.write(data.data(), static_cast<std::streamsize>(data.size()));
      if (!out) throw std::runtime_error(args.save + ": cannot write");
    }
    return all_equal ? 0 : 3;
  } catch (const externspec::Error& e) {
    std::cerr << e.what() << "\n";
  } catch (const c10::Error& e) {
    std::cerr << e.what_without_backtrace() << "\n";
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
  }
  return 1;
}
