// Questions the backend asks of config.pbtxt's text itself, which the server's parsed config cannot
// answer (its JSON drops a stated 0). Apart from the rest of the backend, so that a fuzz target
// (tests/fuzz/fuzz_pbtxt.cpp) builds it alone.
#pragma once

#include <string_view>

namespace externspec::triton {

// Whether the text states max_batch_size as a field at its top level: one pass over protobuf's text
// format, each byte looked at once, no recursion (strings and `#` comments skipped, message and list
// brackets counted).
bool states_max_batch_size(std::string_view pbtxt);

}  // namespace externspec::triton
