// Triton's error objects and C++ exceptions, both ways: a failed server call throws, a C++ error
// becomes the TRITONSERVER_Error a backend entry point returns (the server owns it then).
#pragma once

#include <c10/util/Exception.h>

#include <exception>
#include <stdexcept>
#include <string>

#include "triton_api.h"

namespace externspec::triton {

class TritonCallError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws TritonCallError with the server's message, naming `what`; deletes the error.
inline void check(TRITONSERVER_Error* error, const char* what) {
  if (error == nullptr) return;
  std::string message = std::string(what) + ": " + TRITONSERVER_ErrorMessage(error);
  TRITONSERVER_ErrorDelete(error);
  throw TritonCallError(message);
}

// An exception's message without torch's backtrace: c10::Error::what() carries one (22 frames with
// absolute addresses and install paths), which no client may read (issue 54 item 6).
inline std::string without_backtrace(const std::exception& error) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&error);
  std::string message = c10_error ? c10_error->what_without_backtrace() : error.what();
  if (auto cut = message.find("\nException raised from"); cut != std::string::npos) message.erase(cut);
  return message;
}

inline TRITONSERVER_Error* new_error(TRITONSERVER_Error_Code code, const std::string& message) {
  return TRITONSERVER_ErrorNew(code, message.c_str());
}

inline void log(TRITONSERVER_LogLevel level, const std::string& message) {
  if (TRITONSERVER_Error* error = TRITONSERVER_LogMessage(level, __FILE__, __LINE__, message.c_str()))
    TRITONSERVER_ErrorDelete(error);
}

// Runs `body`, turning what it throws into an error of `code` with the exception's message.
template <class Body>
TRITONSERVER_Error* guarded(TRITONSERVER_Error_Code code, const std::string& prefix, Body&& body) {
  try {
    body();
    return nullptr;
  } catch (const std::exception& e) {
    return new_error(code, prefix + e.what());
  } catch (...) {
    return new_error(TRITONSERVER_ERROR_INTERNAL, prefix + "an unknown C++ exception");
  }
}

}  // namespace externspec::triton
