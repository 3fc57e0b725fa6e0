// The default JSON backend: nlohmann/json's parser (header-only; Debian: nlohmann-json3-dev),
// driven through its SAX interface into a flat tape.
//
// Why not nlohmann::json itself: its objects are std::maps, which lose the document's key order
// (encode must reproduce it byte for byte) and merge repeated keys, and building them is most of
// nlohmann's parse time. The tape keeps order and repeats, enforces the nesting limit while
// parsing, and costs one allocation per string.
#pragma once

#include <nlohmann/json.hpp>

#include "externspec.h"

namespace externspec {

struct NlohmannBackend {
  struct Span {
    std::uint32_t off, len;
  };
  struct Entry {
    JsonKind kind;
    std::uint32_t next = 0;   // index of the entry after this value's subtree
    std::uint32_t count = 0;  // number of children (arrays, objects)
    std::uint32_t key_off = 0, key_len = 0;  // the member's key, when the parent is an object
    union {
      std::int64_t i;
      std::uint64_t u;
      double d;
      bool b;
      Span s;
    } v{};
  };

  struct Tape {
    std::vector<Entry> entries;
    std::string strings;
  };

  // A handle to one value of a parsed document (valid while the Document lives).
  class Value {
   public:
    Value() = default;
    Value(const Tape* t, std::uint32_t i) : t_(t), i_(i) {}
    JsonKind kind() const { return e().kind; }
    bool get_bool() const { return e().v.b; }
    std::int64_t get_int() const { return e().v.i; }
    std::uint64_t get_uint() const { return e().v.u; }
    double get_double() const {
      if (e().kind == JsonKind::BigInt) return std::strtod(std::string(text()).c_str(), nullptr);
      return e().v.d;
    }
    std::string_view get_string() const { return text(); }
    // The literal of a number beyond int64 (for error messages).
    std::string number_text() const {
      if (e().kind == JsonKind::UInt) return std::to_string(e().v.u);
      if (e().kind == JsonKind::BigInt) return std::string(text());
      return std::to_string(e().v.i);
    }
    std::size_t size() const { return e().count; }
    template <class F>
    void for_each_element(F&& f) const {
      const auto& es = t_->entries;
      for (std::uint32_t j = i_ + 1, end = e().next; j < end; j = es[j].next) f(Value(t_, j));
    }
    template <class F>
    void for_each_member(F&& f) const {
      const auto& es = t_->entries;
      for (std::uint32_t j = i_ + 1, end = e().next; j < end; j = es[j].next)
        f(std::string_view(t_->strings.data() + es[j].key_off, es[j].key_len), Value(t_, j));
    }

   private:
    const Entry& e() const { return t_->entries[i_]; }
    std::string_view text() const { return std::string_view(t_->strings.data() + e().v.s.off, e().v.s.len); }
    const Tape* t_ = nullptr;
    std::uint32_t i_ = 0;
  };

  // Builds the tape from nlohmann's SAX events.
  class Builder {
   public:
    using json = nlohmann::json;
    explicit Builder(Tape& t) : t_(t) {}
    bool null() { return push(JsonKind::Null); }
    bool boolean(bool b) {
      push(JsonKind::Bool);
      t_.entries.back().v.b = b;
      return true;
    }
    bool number_integer(json::number_integer_t x) {
      push(JsonKind::Int);
      t_.entries.back().v.i = x;
      return true;
    }
    bool number_unsigned(json::number_unsigned_t x) {
      if (x <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        push(JsonKind::Int);
        t_.entries.back().v.i = static_cast<std::int64_t>(x);
      } else {
        push(JsonKind::UInt);
        t_.entries.back().v.u = x;
      }
      return true;
    }
    bool number_float(json::number_float_t x, const json::string_t& literal) {
      if (literal.find_first_of(".eE") == std::string::npos) {
        // An integer literal beyond uint64: keep the text (Python reads it as an int).
        push(JsonKind::BigInt);
        t_.entries.back().v.s = store(literal);
      } else {
        push(JsonKind::Double);
        t_.entries.back().v.d = x;
      }
      return true;
    }
    bool string(json::string_t& s) {
      push(JsonKind::String);
      t_.entries.back().v.s = store(s);
      return true;
    }
    bool binary(json::binary_t&) { return false; }
    bool key(json::string_t& k) {
      auto s = store(k);
      key_off_ = s.off;
      key_len_ = s.len;
      return true;
    }
    bool start_object(std::size_t) { return open(JsonKind::Object); }
    bool end_object() { return close(); }
    bool start_array(std::size_t) { return open(JsonKind::Array); }
    bool end_array() { return close(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) {
      std::string what = ex.what();
      auto bracket = what.find("] ");
      what = bracket == std::string::npos ? what : what.substr(bracket + 2);
      // Drop the echo of the input ("; last read: ..."): it may hold the very bytes that are invalid.
      auto echo = what.find("; last read:");
      error_ = "Invalid JSON: " + (echo == std::string::npos ? what : what.substr(0, echo));
      return false;
    }
    const std::string& error() const { return error_; }

   private:
    Span store(const std::string& s) {
      auto off = static_cast<std::uint32_t>(t_.strings.size());
      t_.strings.append(s);
      return Span{off, static_cast<std::uint32_t>(s.size())};
    }
    bool push(JsonKind kind) {
      auto idx = static_cast<std::uint32_t>(t_.entries.size());
      Entry& e = t_.entries.emplace_back();
      e.kind = kind;
      e.next = idx + 1;
      if (!stack_.empty()) {
        Entry& parent = t_.entries[stack_.back()];
        ++parent.count;
        if (parent.kind == JsonKind::Object) {
          e.key_off = key_off_;
          e.key_len = key_len_;
        }
      }
      return true;
    }
    bool open(JsonKind kind) {
      if (stack_.size() > static_cast<std::size_t>(MAX_JSON_DEPTH)) {
        error_ = "nesting deeper than " + std::to_string(MAX_JSON_DEPTH) + " levels";
        return false;
      }
      push(kind);
      stack_.push_back(static_cast<std::uint32_t>(t_.entries.size() - 1));
      return true;
    }
    bool close() {
      t_.entries[stack_.back()].next = static_cast<std::uint32_t>(t_.entries.size());
      stack_.pop_back();
      return true;
    }
    Tape& t_;
    std::vector<std::uint32_t> stack_;
    std::uint32_t key_off_ = 0, key_len_ = 0;
    std::string error_;
  };

  class Document {
   public:
    Value parse(std::string_view json) {
      refuse_what_nlohmann_skips(json);
      tape_.entries.clear();
      tape_.strings.clear();
      tape_.entries.reserve(json.size() / 8 + 16);
      tape_.strings.reserve(json.size() / 2 + 16);
      Builder b(tape_);
      bool ok = sax_parse_json(json, b);
      if (!ok || tape_.entries.empty()) detail::fail(detail::IssueKind::Syntax, b.error().empty() ? "Invalid JSON" : b.error());
      return Value(&tape_, 0);
    }

   private:
    // What nlohmann::json::sax_parse does for JSON text, without compiling its readers of the
    // binary formats (CBOR, MessagePack, ...) that it picks at run time: a second of every
    // compile that includes the decoder. nlohmann's parser class is internal, and this is its
    // interface since 3.9; other versions take the public call.
    static bool sax_parse_json(std::string_view json, Builder& b) {
#if NLOHMANN_JSON_VERSION_MAJOR == 3 && NLOHMANN_JSON_VERSION_MINOR >= 9
      auto input = nlohmann::detail::input_adapter(json.data(), json.data() + json.size());
      return nlohmann::detail::parser<nlohmann::json, decltype(input)>(std::move(input), nullptr, true, false)
          .sax_parse(&b, true);
#else
      return nlohmann::json::sax_parse(json.data(), json.data() + json.size(), &b);
#endif
    }
    // nlohmann skips a UTF-8 byte order mark and takes a NUL byte for the end of the input (so
    // anything after it was ignored). JSON allows neither; Python and simdjson refuse both.
    static void refuse_what_nlohmann_skips(std::string_view json) {
      if (json.substr(0, 3) == "\xEF\xBB\xBF")
        detail::fail(detail::IssueKind::Syntax, "Invalid JSON: expected value at line 1 column 1");
      std::size_t nul = json.find('\0');
      if (nul == std::string_view::npos) return;
      std::size_t line_start = json.rfind('\n', nul);
      std::size_t line = 1 + static_cast<std::size_t>(std::count(json.begin(), json.begin() + nul, '\n'));
      std::size_t column = nul - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
      detail::fail(detail::IssueKind::Syntax, "Invalid JSON: NUL byte at line " + std::to_string(line) + " column " +
                                                  std::to_string(column));
    }
    Tape tape_;
  };
};

}  // namespace externspec
