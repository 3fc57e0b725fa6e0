#include "aoti_package/wrapper_outputs.h"

#include <charconv>
#include <optional>

#include <externspec/torch/errors.h>

namespace externspec::detail {
namespace {

constexpr std::string_view kCall = "aoti_torch_proxy_executor_call_function(";
constexpr std::string_view kAssert = "assert_size_stride(";
constexpr std::string_view kHandles = "std::array<AtenTensorHandle,";
// More dimensions than any tensor has: a longer list is refused, so records stay within the
// source's own bytes (as the input records').
constexpr std::size_t kMaxItems = 1024;

std::string_view stripped(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// The comma-separated items of `s` at parenthesis depth 0, stripped; nullopt past kMaxItems.
std::optional<std::vector<std::string>> items(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    const char c = i < s.size() ? s[i] : ',';
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c != ',' || depth != 0) continue;
    if (auto item = stripped(s.substr(start, i - start)); !item.empty()) {
      if (out.size() == kMaxItems) return std::nullopt;
      out.emplace_back(item);
    }
    start = i + 1;
  }
  return out;
}

// The text between the `{` at or after `from` and its `}` (braces do not nest in these lists).
std::optional<std::string_view> braced(std::string_view line, std::size_t& from) {
  const auto open = line.find('{', from);
  const auto close = open == std::string_view::npos ? open : line.find('}', open);
  if (close == std::string_view::npos) return std::nullopt;
  from = close + 1;
  return line.substr(open + 1, close - open - 1);
}

// An extern call: its node index and the names in its tensor array.
struct Call {
  std::size_t node = 0;
  std::vector<std::string> tensors;
};

struct Reader {
  const std::string& label;
  std::size_t line_number = 0;
  std::optional<Call> call;  // the last extern call read
  std::vector<RecordedOutput> outputs;

  [[noreturn]] void too_long() const {
    throw PackageError(label + ": line " + std::to_string(line_number) + " records more than " +
                       std::to_string(kMaxItems) + " dimensions or tensors");
  }

  // `(proxy_executor, N, ..., std::array<AtenTensorHandle, K>{a, b}.data())`: the call, or none
  // (a line this reader does not understand, whose outputs are then not recorded).
  std::optional<Call> read_call(std::string_view args) const {
    const auto comma = args.find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    const auto index = stripped(args.substr(comma + 1, args.find(',', comma + 1) - comma - 1));
    Call c;
    auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), c.node);
    if (ec != std::errc() || end != index.data() + index.size()) return std::nullopt;
    std::size_t at = args.find(kHandles);
    if (at == std::string_view::npos) return c;  // no tensor array (`nullptr`): no outputs
    auto list = braced(args, at);
    if (!list) return std::nullopt;
    auto names = items(*list);
    if (!names) too_long();
    c.tensors = std::move(*names);
    return c;
  }

  // `assert_size_stride(VAR, {sizes}, {strides}, "what")` on a buffer of the last call.
  void read_assert(std::string_view args) {
    const auto comma = args.find(',');
    if (!call || comma == std::string_view::npos) return;
    const std::string_view var = stripped(args.substr(0, comma));
    if (args.find("\"input\"") != std::string_view::npos) return;  // an input's record, not an output's
    std::size_t at = comma;
    auto sizes = braced(args, at);
    auto strides = sizes ? braced(args, at) : std::nullopt;
    if (!strides) return;
    auto size_items = items(*sizes), stride_items = items(*strides);
    if (!size_items || !stride_items) too_long();
    if (size_items->size() != stride_items->size()) return;
    for (std::size_t k = call->tensors.size(); k-- > 0;)
      if (call->tensors[k] == var) {
        outputs.push_back({call->node, k, std::string(var), std::move(*size_items), std::move(*stride_items)});
        return;
      }
  }

  void read(std::string_view line) {
    ++line_number;
    if (auto at = line.find(kCall); at != std::string_view::npos) {
      call = read_call(line.substr(at + kCall.size()));
    } else if (auto at = line.find(kAssert); at != std::string_view::npos) {
      read_assert(line.substr(at + kAssert.size()));
    }
  }
};

}  // namespace

std::vector<RecordedOutput> recorded_outputs_from_wrapper(std::string_view source, const std::string& label) {
  Reader reader{label};
  while (!source.empty()) {
    const auto end = source.find('\n');
    reader.read(source.substr(0, end));
    source.remove_prefix(end == std::string_view::npos ? source.size() : end + 1);
  }
  return std::move(reader.outputs);
}

}  // namespace externspec::detail
