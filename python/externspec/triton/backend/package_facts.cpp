#include "package_facts.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cctype>
#include <exception>
#include <map>

namespace externspec::triton {
namespace {

// A size the source wrote as an integer literal (`8`, `8L`).
std::optional<std::int64_t> literal(const std::string& size) {
  std::string digits = size;
  if (!digits.empty() && digits.back() == 'L') digits.pop_back();
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;
  return std::stoll(digits);
}

bool is_symbol(const std::string& size) {
  return size.size() > 1 && std::isalpha(static_cast<unsigned char>(size[0])) &&
         std::all_of(size.begin() + 1, size.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

TensorFacts input_facts(const RecordedInput& in, std::size_t index) {
  TensorFacts facts{input_name(index), in.dtype, std::nullopt};
  if (!in.rank) return facts;
  std::vector<std::int64_t> dims;
  for (std::size_t d = 0; d < *in.rank; ++d) dims.push_back(d < in.sizes.size() ? literal(in.sizes[d]).value_or(-1) : -1);
  facts.dims = dims;
  return facts;
}

// The batch symbol: dim 0 of every input, a bare symbol, used at no other dim. "" and the reason otherwise.
std::string batch_symbol(const std::vector<RecordedInput>& inputs, std::string& why) {
  if (inputs.empty()) return why = "the model has no inputs", "";
  const RecordedInput& first = inputs[0];
  if (!first.rank || first.sizes.empty() || !is_symbol(first.sizes[0]))
    return why = "dim 0 of " + input_name(0) + " is not a dynamic size in the package", "";
  const std::string symbol = first.sizes[0];
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& sizes = inputs[i].sizes;
    if (sizes.empty() || sizes[0] != symbol)
      return why = "dim 0 of " + input_name(i) + " is not the batch size of " + input_name(0), "";
    if (std::find(sizes.begin() + 1, sizes.end(), symbol) != sizes.end())
      return why = input_name(i) + " uses the batch size at a dim other than 0", "";
  }
  return symbol;
}

// A probe input: zeros of the recorded dtype and sizes, the batch symbol set to `batch`, every other
// dynamic size to its smallest recorded value that is at least 2.
std::optional<at::Tensor> probe_input(const RecordedInput& in, std::size_t index, const std::string& batch_symbol,
                                      std::int64_t batch, const c10::Device& device, std::string& why) {
  if (!in.dtype || !in.rank || in.sizes.size() != *in.rank)
    return why = "the package records no dtype or shape for " + input_name(index), std::nullopt;
  std::vector<std::int64_t> sizes;
  for (std::size_t d = 0; d < *in.rank; ++d) {
    const std::string& size = in.sizes[d];
    if (auto k = literal(size)) {
      sizes.push_back(*k);
    } else if (!batch_symbol.empty() && size == batch_symbol) {
      sizes.push_back(batch);
    } else if (is_symbol(size)) {
      auto low = in.min_size.find(d);
      sizes.push_back(std::max<std::int64_t>(2, low == in.min_size.end() ? 2 : low->second));
    } else {
      return why = input_name(index) + " has the size expression `" + size + "` at dim " + std::to_string(d), std::nullopt;
    }
  }
  return at::zeros(sizes, at::TensorOptions().dtype(*in.dtype).device(device));
}

std::optional<std::vector<at::Tensor>> probe(AOTIRunner& runner, const std::string& symbol, std::int64_t batch,
                                             std::string& why) {
  std::vector<at::Tensor> inputs;
  const auto& recorded = runner.recorded_inputs();
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    auto input = probe_input(recorded[i], i, symbol, batch, runner.device(), why);
    if (!input) return std::nullopt;
    inputs.push_back(*input);
  }
  try {
    return runner.run(inputs);
  } catch (const std::exception& e) {
    why = std::string("a probe run on zeros failed: ") + e.what();
    return std::nullopt;
  }
}

// Outputs from two probes (batch sizes a and b): a dim that differs between them is dynamic; dim 0
// equal to the batch size in both follows the batch.
bool record_outputs(PackageFacts& facts, const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b,
                           std::int64_t batch_a, std::int64_t batch_b) {
  bool batch_follows = true;
  for (std::size_t k = 0; k < a.size(); ++k) {
    std::vector<std::int64_t> dims;
    bool same_rank = k < b.size() && a[k].dim() == b[k].dim();
    for (std::int64_t d = 0; d < a[k].dim(); ++d)
      dims.push_back(same_rank && a[k].size(d) == b[k].size(d) ? a[k].size(d) : -1);
    batch_follows = batch_follows && same_rank && a[k].dim() > 0 && a[k].size(0) == batch_a && b[k].size(0) == batch_b;
    facts.outputs.push_back({output_name(k), a[k].scalar_type(), same_rank ? std::optional(dims) : std::nullopt});
  }
  return batch_follows;
}

}  // namespace

std::string input_name(std::size_t index) { return "INPUT__" + std::to_string(index); }
std::string output_name(std::size_t index) { return "OUTPUT__" + std::to_string(index); }

PackageFacts package_facts(AOTIRunner& runner) {
  PackageFacts facts;
  const auto& recorded = runner.recorded_inputs();
  for (std::size_t i = 0; i < recorded.size(); ++i) facts.inputs.push_back(input_facts(recorded[i], i));
  std::string symbol = batch_symbol(recorded, facts.batch_static_reason);
  std::int64_t low = 2;
  if (!symbol.empty()) {
    if (auto hi = recorded[0].max_size.find(0); hi != recorded[0].max_size.end()) facts.max_batch = hi->second;
    if (auto lo = recorded[0].min_size.find(0); lo != recorded[0].min_size.end()) low = std::max(low, lo->second);
  }
  bool two_sizes = !symbol.empty() && low + 1 <= facts.max_batch;
  auto a = probe(runner, symbol, low, facts.outputs_unknown);
  auto b = a && two_sizes ? probe(runner, symbol, low + 1, facts.outputs_unknown) : a;
  if (!a || !b) return facts;
  bool batch_follows = record_outputs(facts, *a, *b, low, two_sizes ? low + 1 : low);
  facts.batch_dynamic = !symbol.empty() && two_sizes && batch_follows;
  if (!symbol.empty() && !facts.batch_dynamic)
    facts.batch_static_reason = two_sizes ? "dim 0 of some output does not follow the batch size"
                                          : "the package allows a single batch size";
  return facts;
}

}  // namespace externspec::triton
