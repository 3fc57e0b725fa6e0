#include "pbtxt.h"

#include <cctype>
#include <cstddef>

namespace externspec::triton {

bool states_max_batch_size(std::string_view pbtxt) {
  // A recursive std::regex over the file here overflowed the load thread's stack on 131,072 spaces
  // after a newline and killed the server (issue 54 item 4).
  const std::size_t n = pbtxt.size();
  std::size_t depth = 0;
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t i = 0; i < n;) {
    const char c = pbtxt[i];
    if (c == '#') {
      while (i < n && pbtxt[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      for (++i; i < n && pbtxt[i] != c && pbtxt[i] != '\n'; ++i)
        if (pbtxt[i] == '\\') ++i;
      ++i;
    } else if (c == '{' || c == '[' || c == '<') {
      ++depth, ++i;
    } else if (c == '}' || c == ']' || c == '>') {
      depth -= depth > 0, ++i;
    } else if (ident(c)) {
      const std::size_t start = i;
      while (i < n && ident(pbtxt[i])) ++i;
      if (depth == 0 && pbtxt.substr(start, i - start) == "max_batch_size") {
        std::size_t j = i;
        while (j < n && std::isspace(static_cast<unsigned char>(pbtxt[j]))) ++j;
        if (j < n && pbtxt[j] == ':') return true;
      }
    } else {
      ++i;
    }
  }
  return false;
}

}  // namespace externspec::triton
