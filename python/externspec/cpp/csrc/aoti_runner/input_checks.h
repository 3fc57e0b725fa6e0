// The input checks: what the package records about each input (RecordedInput, read from its
// wrapper source by aoti_package/wrapper_inputs.cpp) compiled at load into expressions over the
// symbols of dynamic sizes (AOTIRunner::compile_checks), and checked before every run
// (AOTIRunner::check_inputs: count, device, layout, storage, dtype, rank, sizes and their ranges,
// sizes shared between inputs, strides). Both are AOTIRunner members defined in input_checks.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <externspec/torch/aoti_runner.h>

namespace externspec::detail {

// One size or stride as the compiled code wrote it: a product of integer literals and symbols of
// dynamic sizes (`4L*s77`), or something else (not checked).
struct Expr {
  bool known = false;
  std::int64_t factor = 1;
  std::vector<std::size_t> symbols;
};

// `text` as an Expr, its symbols numbered in `symbols` (new ones appended to `names`).
Expr parse_expr(std::string_view text, std::unordered_map<std::string, std::size_t>& symbols,
                std::vector<std::string>& names);

// The value of `e` under the bound symbols, or nullopt (an unbound symbol, an overflow).
std::optional<std::int64_t> eval(const Expr& e, const std::vector<std::optional<std::int64_t>>& values);

using SymbolValues = std::vector<std::optional<std::int64_t>>;

// The input checks, compiled at load from the RecordedInputs (symbols numbered, expressions
// parsed), checked before every run; output_checks.h's twin.
class InputChecks {
 public:
  // `records`: one per input of the model. `device`: the runner's. `name`: the model, in messages.
  InputChecks(std::vector<RecordedInput> records, c10::Device device, std::string name);

  // CallError naming the input for inputs that do not match the records (the top of this file);
  // binds `values` (the size symbols, by `symbols()`'s numbering) from the inputs' sizes.
  void check(const std::vector<at::Tensor>& inputs, SymbolValues& values) const;

  // The size symbols' numbering, which the output checks extend.
  std::vector<std::string>& symbols() { return symbols_; }
  std::unordered_map<std::string, std::size_t>& numbers() { return numbers_; }

 private:
  struct Input {
    std::vector<Expr> sizes, strides;
  };
  std::vector<RecordedInput> records_;
  c10::Device device_;
  std::string name_;
  std::vector<Input> inputs_;
  std::vector<std::string> symbols_;
  std::unordered_map<std::string, std::size_t> numbers_;  // symbol -> its index in `symbols_`
};

}  // namespace externspec::detail
