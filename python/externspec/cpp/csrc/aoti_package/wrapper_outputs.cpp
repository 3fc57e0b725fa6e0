#include "aoti_package/wrapper_outputs.h"

#include <array>
#include <charconv>
#include <optional>
#include <unordered_map>
#include <utility>

#include <externspec/torch/errors.h>

namespace externspec::detail {
namespace {

constexpr std::string_view kCall = "aoti_torch_proxy_executor_call_function(";
constexpr std::string_view kAssert = "assert_size_stride(";
constexpr std::string_view kHandles = "std::array<AtenTensorHandle,";
constexpr std::string_view kDataPtr = ".data_ptr())";
constexpr std::string_view kMove = " = std::move(";
// More dimensions than any tensor has: a longer list is refused, so records stay within the
// source's own bytes (as the input records').
constexpr std::size_t kMaxItems = 1024;
// Dimensions recorded in all, sizes and strides (each kept as text, then as an expression: about
// 72 bytes, where the source spends 3 or 4): a bound on the whole, not per line. A model of 10,000
// extern outputs of rank 8 records 160,000; the bound holds the records under about 75 MB.
constexpr std::size_t kMaxTotalItems = std::size_t{1} << 20;
// Names a reuse gives recorded buffers (one a reused buffer: a model reuses far fewer).
constexpr std::size_t kMaxReuses = std::size_t{1} << 16;
// The longest `(const at::complex<at::Half>*)(NAME` before `.data_ptr())` read as a cast.
constexpr std::size_t kCastWindow = 256;

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

// The C++ element types inductor's CPU kernels take (torch/_inductor/codegen/cpp_utils.py,
// DTYPE_TO_CPP, in torch 2.11 to 2.15), as c10 names the dtypes.
constexpr std::array<std::pair<std::string_view, c10::ScalarType>, 20> kElementTypes{{
    {"float", c10::ScalarType::Float},
    {"double", c10::ScalarType::Double},
    {"at::Half", c10::ScalarType::Half},
    {"int64_t", c10::ScalarType::Long},
    {"int32_t", c10::ScalarType::Int},
    {"int16_t", c10::ScalarType::Short},
    {"int8_t", c10::ScalarType::Char},
    {"uint64_t", c10::ScalarType::UInt64},
    {"uint32_t", c10::ScalarType::UInt32},
    {"uint16_t", c10::ScalarType::UInt16},
    {"uint8_t", c10::ScalarType::Byte},
    {"bool", c10::ScalarType::Bool},
    {"at::BFloat16", c10::ScalarType::BFloat16},
    {"at::complex<at::Half>", c10::ScalarType::ComplexHalf},
    {"at::complex<float>", c10::ScalarType::ComplexFloat},
    {"at::complex<double>", c10::ScalarType::ComplexDouble},
    {"at::Float8_e4m3fn", c10::ScalarType::Float8_e4m3fn},
    {"at::Float8_e5m2", c10::ScalarType::Float8_e5m2},
    {"at::Float8_e4m3fnuz", c10::ScalarType::Float8_e4m3fnuz},
    {"at::Float8_e5m2fnuz", c10::ScalarType::Float8_e5m2fnuz},
}};

std::optional<c10::ScalarType> element_type(std::string_view cpp) {
  if (cpp.substr(0, 6) == "const ") cpp.remove_prefix(6);
  for (const auto& [name, type] : kElementTypes)
    if (cpp == name) return type;
  return std::nullopt;
}

bool is_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
  return true;
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
  // Each recorded buffer's name, and each name a `std::move` reuse gave it, -> its record. Only
  // names of recorded buffers enter, so this is bounded by the records and the reuse lines.
  std::unordered_map<std::string, std::size_t> record_of;
  std::vector<bool> conflicting;  // by record: kernels cast it as two element types (dtype unknown)
  std::size_t total_items = 0;    // sizes and strides of every record
  std::size_t reuses = 0;         // names given to recorded buffers by `std::move`

  [[noreturn]] void refuse(const std::string& why) const {
    throw PackageError(label + ": line " + std::to_string(line_number) + " " + why);
  }
  [[noreturn]] void too_long() const {
    refuse("records more than " + std::to_string(kMaxItems) + " dimensions or tensors");
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

  // The op string that ends an assert (`"torch.ops.aten.relu.default"`), or "".
  static std::string recorded_op(std::string_view rest) {
    const auto open = rest.find('"');
    const auto close = open == std::string_view::npos ? open : rest.find('"', open + 1);
    return close == std::string_view::npos ? std::string() : std::string(rest.substr(open + 1, close - open - 1));
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
    for (std::size_t k = call->tensors.size(); k-- > 0;) {
      if (call->tensors[k] != var) continue;
      total_items += 2 * size_items->size();
      if (total_items > kMaxTotalItems)
        refuse("takes the extern outputs' records past " + std::to_string(kMaxTotalItems) +
               " dimensions in all");
      auto [seen, fresh] = record_of.emplace(std::string(var), outputs.size());
      if (!fresh && outputs[seen->second].node == call->node)
        refuse("records `" + std::string(var) + "` a second time after extern call " + std::to_string(call->node) +
               " (torch records each output once)");
      seen->second = outputs.size();
      outputs.push_back({call->node, k, std::string(var), std::move(*size_items), std::move(*stride_items),
                         recorded_op(args.substr(at)), std::nullopt});
      conflicting.push_back(false);
      return;
    }
  }

  // `auto NEW = std::move(OLD);  // reuse` of a recorded buffer: NEW names the same record.
  void read_move(std::string_view line, std::size_t at) {
    const auto name = stripped(line.substr(0, at));
    if (name.substr(0, 5) != "auto ") return;
    const auto rest = line.substr(at + kMove.size());
    auto old = record_of.find(std::string(rest.substr(0, rest.find(')'))));
    if (old == record_of.end()) return;
    if (++reuses > kMaxReuses) refuse("reuses recorded buffers more than " + std::to_string(kMaxReuses) + " times");
    record_of[std::string(stripped(name.substr(5)))] = old->second;
  }

  // Each `(TYPE*)(NAME.data_ptr())` of the line: a kernel argument, NAME's element type as TYPE.
  // The cast is looked for in the kCastWindow bytes before each `.data_ptr())`, so a line of many
  // is read in one pass.
  void read_casts(std::string_view line) {
    for (auto at = line.find(kDataPtr); at != std::string_view::npos; at = line.find(kDataPtr, at + 1)) {
      const auto from = at > kCastWindow ? at - kCastWindow : 0;
      const auto window = line.substr(from, at - from);
      const auto cast_end = window.rfind("*)(");
      const auto cast_open = cast_end == std::string_view::npos ? cast_end : window.rfind('(', cast_end);
      if (cast_open == std::string_view::npos) continue;
      const auto name = window.substr(cast_end + 3);
      auto record = is_name(name) ? record_of.find(std::string(name)) : record_of.end();
      if (record == record_of.end()) continue;
      const auto type = element_type(stripped(window.substr(cast_open + 1, cast_end - cast_open - 1)));
      // A type not in the table, or a second type: the record states none.
      auto& out = outputs[record->second];
      if (conflicting[record->second] || !type || (out.dtype && out.dtype != type)) {
        conflicting[record->second] = true;
        out.dtype.reset();
      } else {
        out.dtype = type;
      }
    }
  }

  void read(std::string_view line) {
    ++line_number;
    if (auto at = line.find(kCall); at != std::string_view::npos) {
      call = read_call(line.substr(at + kCall.size()));
    } else if (auto at = line.find(kAssert); at != std::string_view::npos) {
      read_assert(line.substr(at + kAssert.size()));
    } else if (auto at = line.find(kMove); at != std::string_view::npos) {
      read_move(line, at);
    } else if (!record_of.empty()) {
      read_casts(line);
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
