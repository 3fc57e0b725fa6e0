// The fast JSON backend: simdjson's DOM parser (Debian: libsimdjson-dev; link with -lsimdjson).
//
//   #include <externspec/backend_simdjson.h>
//   auto doc = externspec::decode<externspec::ExportedProgram, externspec::SimdjsonBackend>(json);
//
// simdjson's tape keeps key order and repeated keys and enforces the nesting limit while parsing,
// which is all the decoder needs. A Document owns the parser: reuse one to decode many documents
// without reallocating.
#pragma once

#include <algorithm>
#include <simdjson.h>

#include "externspec.h"

namespace externspec {

struct SimdjsonBackend {
#ifndef EXTERNSPEC_NO_DEFAULT_BACKEND
  // simdjson rejects integer literals beyond 64 bits while parsing; the document then goes to the
  // default backend, which reads them as Python does (a float, or a range error with its path).
  using Fallback = NlohmannBackend;
#endif
  class Value {
   public:
    Value() = default;
    explicit Value(simdjson::dom::element e) : e_(e) {}
    JsonKind kind() const {
      switch (e_.type()) {
        case simdjson::dom::element_type::ARRAY: return JsonKind::Array;
        case simdjson::dom::element_type::OBJECT: return JsonKind::Object;
        case simdjson::dom::element_type::INT64: return JsonKind::Int;
        case simdjson::dom::element_type::UINT64: return JsonKind::UInt;
        case simdjson::dom::element_type::DOUBLE: return JsonKind::Double;
        case simdjson::dom::element_type::STRING: return JsonKind::String;
        case simdjson::dom::element_type::BOOL: return JsonKind::Bool;
        case simdjson::dom::element_type::NULL_VALUE: return JsonKind::Null;
      }
      return JsonKind::Null;
    }
    bool get_bool() const { return e_.get_bool().value_unsafe(); }
    std::int64_t get_int() const { return e_.get_int64().value_unsafe(); }
    std::uint64_t get_uint() const { return e_.get_uint64().value_unsafe(); }
    double get_double() const { return e_.get_double().value_unsafe(); }
    std::string_view get_string() const { return e_.get_string().value_unsafe(); }
    std::string number_text() const {
      if (kind() == JsonKind::UInt) return std::to_string(get_uint());
      return std::to_string(get_int());
    }
    // simdjson's own size() saturates at 0xFFFFFF: larger containers are counted by iteration.
    std::size_t size() const {
      std::size_t n = 0;
      if (kind() == JsonKind::Array) {
        simdjson::dom::array array = e_.get_array().value_unsafe();
        n = array.size();
        if (n == kSaturated) n = count(array);
      } else if (kind() == JsonKind::Object) {
        simdjson::dom::object object = e_.get_object().value_unsafe();
        n = object.size();
        if (n == kSaturated) n = count(object);
      }
      return n;
    }
    template <class F>
    void for_each_element(F&& f) const {
      simdjson::dom::array array = e_.get_array().value_unsafe();
      for (simdjson::dom::element x : array) f(Value(x));
    }
    template <class F>
    void for_each_member(F&& f) const {
      simdjson::dom::object object = e_.get_object().value_unsafe();
      for (simdjson::dom::key_value_pair kv : object) f(kv.key, Value(kv.value));
    }

   private:
    static constexpr std::size_t kSaturated = 0xFFFFFF;
    template <class Container>
    static std::size_t count(const Container& c) {
      std::size_t n = 0;
      for (auto it = c.begin(); it != c.end(); ++it) ++n;
      return n;
    }
    simdjson::dom::element e_;
  };

  class Document {
   public:
    Value parse(std::string_view json) {
      // The nesting rule, as Python's: no value lies inside more than MAX_JSON_DEPTH containers, so
      // containers nest at most MAX_JSON_DEPTH + 1 deep and only the deepest may be empty. simdjson
      // counts containers: a document parsed within MAX_JSON_DEPTH (at least 1) keeps the rule; only
      // one that fails there is parsed again one level deeper and walked for a container at the
      // limit that holds something.
      const std::size_t strict = MAX_JSON_DEPTH > 0 ? MAX_JSON_DEPTH : 1;
      simdjson::dom::element root;
      auto error = parse_within(json, strict, root);
      bool walk = MAX_JSON_DEPTH == 0;
      if (error == simdjson::DEPTH_ERROR && MAX_JSON_DEPTH > 0) {
        error = parse_within(json, MAX_JSON_DEPTH + 1, root);
        walk = true;
      }
      if (error == simdjson::DEPTH_ERROR || (!error && walk && holds_too_deep(root, 0)))
        detail::fail(detail::IssueKind::Limit,
                     message(Message::NESTING_TOO_DEEP, {{"depth", std::to_string(MAX_JSON_DEPTH)}}));
      if (error == simdjson::UTF8_ERROR)
        detail::fail(detail::IssueKind::Encoding, std::string("Invalid JSON: ") + simdjson::error_message(error));
      // A number beyond simdjson's range may still be JSON (Python reads big integers); an invalid
      // string may be a lone surrogate escape (an encoding problem) or a bad escape (syntax), which
      // simdjson's one STRING_ERROR does not tell apart: the fallback parser reads both exactly.
      if (error == simdjson::NUMBER_ERROR || error == simdjson::STRING_ERROR) {
        detail::Failure f;
        f.issues.push_back(detail::Issue{detail::IssueKind::Syntax, std::string(),
                                         error == simdjson::NUMBER_ERROR
                                             ? std::string("Invalid JSON: number out of range")
                                             : std::string("Invalid JSON: ") + simdjson::error_message(error)});
        f.retry_with_fallback = true;
        throw f;
      }
      if (error) detail::fail(detail::IssueKind::Syntax, std::string("Invalid JSON: ") + simdjson::error_message(error));
      return Value(root);
    }

   private:
    simdjson::error_code parse_within(std::string_view json, std::size_t depth, simdjson::dom::element& root) {
      if (json.size() > capacity_ || depth != depth_) {
        std::size_t capacity = std::max(json.size(), capacity_);
        if (parser_.allocate(capacity, depth) != simdjson::SUCCESS)
          detail::fail(detail::IssueKind::Syntax, "Invalid JSON: cannot allocate a parser for " +
                                                      std::to_string(json.size()) + " bytes");
        capacity_ = capacity;
        depth_ = depth;
      }
      return parser_.parse(json.data(), json.size()).get(root);
    }
    // True if a container `depth` containers deep holds a value deeper than MAX_JSON_DEPTH.
    static bool holds_too_deep(simdjson::dom::element e, std::size_t depth) {
      simdjson::dom::array array;
      simdjson::dom::object object;
      if (!e.get(array)) {
        if (depth == static_cast<std::size_t>(MAX_JSON_DEPTH)) return array.begin() != array.end();
        for (simdjson::dom::element x : array)
          if (holds_too_deep(x, depth + 1)) return true;
      } else if (!e.get(object)) {
        if (depth == static_cast<std::size_t>(MAX_JSON_DEPTH)) return object.begin() != object.end();
        for (simdjson::dom::key_value_pair kv : object)
          if (holds_too_deep(kv.value, depth + 1)) return true;
      }
      return false;
    }
    simdjson::dom::parser parser_;
    std::size_t capacity_ = 0;
    std::size_t depth_ = 0;
  };
};

}  // namespace externspec
