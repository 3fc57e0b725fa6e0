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

#include <externspec/torch/aoti_runner.h>

namespace externspec {
namespace detail {

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

}  // namespace detail

// The input checks, compiled at load from the RecordedInputs: symbols numbered, expressions parsed.
struct AOTIRunner::Checks {
  struct Input {
    std::vector<detail::Expr> sizes, strides;
  };
  std::vector<Input> inputs;
  std::vector<std::string> symbols;
  std::unordered_map<std::string, std::size_t> numbers;  // symbol -> its index in `symbols`
};

}  // namespace externspec
