// The JSON writer of the encoder: byte-identical to pydantic-core's model_dump_json.
// Part of wire.h (include <externspec/wire.h>), which includes the parts in order; each includes what it uses.
#pragma once

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace externspec {

namespace detail {

// ---- the writer: byte-identical to pydantic-core's model_dump_json ----

inline void write_string(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out += '"';
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + start, i - start);
    start = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 0xF];
    }
  }
  out.append(s.data() + start, s.size() - start);
  out += '"';
}

inline void write_int(std::string& out, std::int64_t x) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, r.ptr);
}

// Shortest round-trip digits, laid out as pydantic-core writes floats: fixed notation with a
// ".0" for decimal exponents in (-5, 16], else scientific with an explicit exponent sign ("1e+16",
// "1e-6"); non-finite values are the strings "Infinity", "-Infinity", "NaN".
inline void write_double(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += std::isnan(x) ? "\"NaN\"" : (x > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  // buf = [-]d[.ddd]e(+|-)XX
  std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));
  bool negative = sci[0] == '-';
  if (negative) sci.remove_prefix(1);
  std::size_t epos = sci.find('e');
  std::string digits;
  digits += sci[0];
  if (epos > 1) digits.append(sci.substr(2, epos - 2));
  int exp10 = 0;
  std::from_chars(sci.data() + epos + (sci[epos + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exp10);
  // value = 0.digits * 10^kk
  int n = static_cast<int>(digits.size());
  int kk = exp10 + 1;
  if (negative) out += '-';
  if (digits == "0") {
    out += "0.0";
    return;
  }
  if (kk > 0 && kk <= 16) {
    if (n <= kk) {
      out += digits;
      out.append(static_cast<std::size_t>(kk - n), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<std::size_t>(kk));
      out += '.';
      out.append(digits, static_cast<std::size_t>(kk), std::string::npos);
    }
  } else if (kk > -5 && kk <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-kk), '0');
    out += digits;
  } else {
    out += digits[0];
    if (n > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    out += 'e';
    int e = kk - 1;
    if (e >= 0) out += '+';
    out += std::to_string(e);
  }
}

inline void write_bool(std::string& out, bool b) { out += b ? "true" : "false"; }

}  // namespace detail
}  // namespace externspec
