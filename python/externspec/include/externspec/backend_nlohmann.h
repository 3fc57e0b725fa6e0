// The default JSON backend: nlohmann/json's parser (header-only; Debian: nlohmann-json3-dev),
// driven through its SAX interface into a flat tape.
//
// Why not nlohmann::json itself: its objects are std::maps, which lose the document's key order
// (encode must reproduce it byte for byte) and merge repeated keys, and building them is most of
// nlohmann's parse time. The tape keeps order and repeats, enforces the nesting limit while
// parsing, and costs one allocation per string.
#pragma once

#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "externspec.h"

namespace externspec {

struct NlohmannBackend {
  struct Span {
    std::uint32_t off, len;
  };
  // 16 bytes per JSON value: peak memory is a small multiple of the input even for `[0,0,...]`
  // (two bytes per value). An object's member is two entries: its key (kind String), then the value.
  struct Entry {
    JsonKind kind;
    std::uint32_t next;  // index of the entry after this value's subtree (a key: its value's index)
    union {
      std::int64_t i;
      std::uint64_t u;
      double d;
      bool b;
      Span s;
      std::uint64_t count;  // number of elements or members (arrays, objects)
    } v;
  };
  static_assert(sizeof(Entry) == 16);

  // Entries in fixed blocks, never moved: growing costs no copy, so the peak is the entries
  // themselves plus one partly filled block (a doubling vector peaks at 1.5x its final size).
  class Tape {
   public:
    static constexpr std::uint32_t BLOCK_BITS = 12, BLOCK = 1u << BLOCK_BITS;
    const Entry& operator[](std::uint32_t i) const { return blocks_[i >> BLOCK_BITS][i & (BLOCK - 1)]; }
    Entry& operator[](std::uint32_t i) { return blocks_[i >> BLOCK_BITS][i & (BLOCK - 1)]; }
    std::uint32_t size() const { return size_; }
    Entry& push() {
      if (size_ == std::numeric_limits<std::uint32_t>::max())
        detail::fail(detail::IssueKind::Syntax, "document holds more than 2^32 - 1 JSON values");
      if ((size_ >> BLOCK_BITS) == blocks_.size()) blocks_.push_back(std::make_unique<Entry[]>(BLOCK));
      return (*this)[size_++];
    }
    void clear() { size_ = 0; }
    std::string strings;

   private:
    std::vector<std::unique_ptr<Entry[]>> blocks_;
    std::uint32_t size_ = 0;
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
    std::size_t size() const { return static_cast<std::size_t>(e().v.count); }
    template <class F>
    void for_each_element(F&& f) const {
      const Tape& es = *t_;
      for (std::uint32_t j = i_ + 1, end = e().next; j < end; j = es[j].next) f(Value(t_, j));
    }
    template <class F>
    void for_each_member(F&& f) const {
      const Tape& es = *t_;
      for (std::uint32_t j = i_ + 1, end = e().next; j < end; j = es[j + 1].next) {
        const Span key = es[j].v.s;
        f(std::string_view(t_->strings.data() + key.off, key.len), Value(t_, j + 1));
      }
    }

   private:
    const Entry& e() const { return (*t_)[i_]; }
    std::string_view text() const { return std::string_view(t_->strings.data() + e().v.s.off, e().v.s.len); }
    const Tape* t_ = nullptr;
    std::uint32_t i_ = 0;
  };

  // Builds the tape from nlohmann's SAX events.
  class Builder {
   public:
    using json = nlohmann::json;
    explicit Builder(Tape& t) : t_(t) {}
    bool null() {
      if (too_deep()) return false;
      push(JsonKind::Null);
      return true;
    }
    bool boolean(bool b) {
      if (too_deep()) return false;
      push(JsonKind::Bool).v.b = b;
      return true;
    }
    bool number_integer(json::number_integer_t x) {
      if (too_deep()) return false;
      push(JsonKind::Int).v.i = x;
      return true;
    }
    bool number_unsigned(json::number_unsigned_t x) {
      if (too_deep()) return false;
      if (x <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        push(JsonKind::Int).v.i = static_cast<std::int64_t>(x);
      else
        push(JsonKind::UInt).v.u = x;
      return true;
    }
    bool number_float(json::number_float_t x, const json::string_t& literal) {
      if (too_deep()) return false;
      if (literal.find_first_of(".eE") == std::string::npos)
        // An integer literal beyond uint64: keep the text (Python reads it as an int).
        push(JsonKind::BigInt).v.s = store(literal);
      else
        push(JsonKind::Double).v.d = x;
      return true;
    }
    bool string(json::string_t& s) {
      if (too_deep()) return false;
      push(JsonKind::String).v.s = store(s);
      return true;
    }
    bool binary(json::binary_t&) { return false; }
    // The key entry precedes its value; the parent counts members when the value is pushed.
    bool key(json::string_t& k) {
      std::uint32_t idx = t_.size();
      Entry& e = t_.push();
      e.kind = JsonKind::String;
      e.next = idx + 1;
      e.v.s = store(k);
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
      kind_ = encoding_error(what) ? detail::IssueKind::Encoding : detail::IssueKind::Syntax;
      return false;
    }
    // nlohmann's lexer reports every error as one exception type (parse_error 101) whose only
    // detail is its description; its descriptions are fixed strings, so the text ill-formed UTF-8
    // and lone surrogates are told apart by is nlohmann's own vocabulary, read here, where the
    // parser's verdict enters the decoder.
    static bool encoding_error(const std::string& what) {
      return what.find("ill-formed UTF-8") != std::string::npos || what.find("surrogate U+") != std::string::npos;
    }
    const std::string& error() const { return error_; }
    detail::IssueKind error_kind() const { return kind_; }

   private:
    Span store(const std::string& s) {
      auto off = static_cast<std::uint32_t>(t_.strings.size());
      t_.strings.append(s);
      return Span{off, static_cast<std::uint32_t>(s.size())};
    }
    Entry& push(JsonKind kind) {
      if (!stack_.empty()) ++t_[stack_.back()].v.count;
      std::uint32_t idx = t_.size();
      Entry& e = t_.push();
      e.kind = kind;
      e.next = idx + 1;
      e.v.u = 0;
      return e;
    }
    // The nesting rule, as Python's (pydantic-core's) at the default: no value, scalar or container,
    // lies inside more than MAX_JSON_DEPTH containers (the top-level value lies inside none).
    bool too_deep() {
      if (stack_.size() <= static_cast<std::size_t>(MAX_JSON_DEPTH)) return false;
      error_ = message(Message::NESTING_TOO_DEEP, {{"depth", std::to_string(MAX_JSON_DEPTH)}});
      kind_ = detail::IssueKind::Limit;
      return true;
    }
    bool open(JsonKind kind) {
      if (too_deep()) return false;
      push(kind);
      stack_.push_back(t_.size() - 1);
      return true;
    }
    bool close() {
      t_[stack_.back()].next = t_.size();
      stack_.pop_back();
      return true;
    }
    Tape& t_;
    std::vector<std::uint32_t> stack_;
    std::string error_;
    detail::IssueKind kind_ = detail::IssueKind::Syntax;
  };

  class Document {
   public:
    Value parse(std::string_view json) {
      refuse_what_nlohmann_skips(json);
      tape_.clear();
      tape_.strings.clear();
      // Strings and keys never outgrow the input: reserve it once (pages are touched only as
      // they fill, so the reservation costs address space, not memory).
      tape_.strings.reserve(json.size());
      Builder b(tape_);
      bool ok = sax_parse_json(json, b);
      if (!ok || tape_.size() == 0) detail::fail(b.error_kind(), b.error().empty() ? "Invalid JSON" : b.error());
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
