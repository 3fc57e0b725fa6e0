// The messages both languages render, from one table (messages.def; Python's twin is
// python/externspec/messages.py, and tests/cpp/test_messages.py renders every entry through both).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace externspec {

enum class Message : std::size_t {
#define ES_MESSAGE(name, text) name,
#include <externspec/messages.def>
#undef ES_MESSAGE
};

namespace detail {

struct MessageEntry {
  std::string_view name, text;
};

inline constexpr MessageEntry kMessages[] = {
#define ES_MESSAGE(name, text) {#name, text},
#include <externspec/messages.def>
#undef ES_MESSAGE
};

}  // namespace detail

// A placeholder's name and its value, as the caller renders it.
using MessageParams = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// `text` with each `{param}` replaced by its value in `params` (pairs of a name and a value);
// std::invalid_argument for a placeholder without one.
template <class Params>
std::string render_message(std::string_view text, const Params& params) {
  std::string out;
  out.reserve(text.size() + 64);
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t open = text.find('{', pos), close = open == std::string_view::npos ? open : text.find('}', open);
    if (close == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    out.append(text.substr(pos, open - pos));
    std::string_view key = text.substr(open + 1, close - open - 1);
    auto param = params.begin();
    while (param != params.end() && std::string_view(param->first) != key) ++param;
    if (param == params.end()) throw std::invalid_argument("no value for the message's {" + std::string(key) + "}");
    out.append(param->second);
    pos = close + 1;
  }
  return out;
}

// The text of the message named `name` (its enumerator's name); std::invalid_argument for another name.
inline std::string_view message_text(std::string_view name) {
  for (const auto& entry : detail::kMessages)
    if (entry.name == name) return entry.text;
  throw std::invalid_argument("no message named " + std::string(name));
}

// Message `m`, its placeholders replaced by `params`.
inline std::string message(Message m, MessageParams params = {}) {
  return render_message(detail::kMessages[static_cast<std::size_t>(m)].text, params);
}

}  // namespace externspec
