// A stand-in for the one part of tritonserver that the backend's TRITONBACKEND_Initialize calls: the
// server's backend API version (from the command line) and its error objects. A real server cannot
// be made to report another version, so this program loads libtriton_externspec.so as the server
// does (dlopen, lazy binding: the entry points that are not called need no definition) and calls
// TRITONBACKEND_Initialize. The symbols are exported from this executable (-rdynamic).
//
//   api_version_harness <backend.so> <major> <minor>  -> "accepted", or "refused <code> <message>"
//                                                        (<code>: UNSUPPORTED, else code-<n>)
//   api_version_harness --declared                    -> "<major> <minor>" of triton_api.h
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "triton_api.h"

struct TRITONSERVER_Error {
  TRITONSERVER_Error_Code code;
  std::string message;
};

namespace {
std::uint32_t server_major = 0, server_minor = 0;
}  // namespace

extern "C" {

TRITONSERVER_Error* TRITONBACKEND_ApiVersion(uint32_t* major, uint32_t* minor) {
  *major = server_major;
  *minor = server_minor;
  return nullptr;
}

TRITONSERVER_Error* TRITONSERVER_ErrorNew(TRITONSERVER_Error_Code code, const char* msg) {
  return new TRITONSERVER_Error{code, msg};
}

void TRITONSERVER_ErrorDelete(TRITONSERVER_Error* error) { delete error; }

const char* TRITONSERVER_ErrorMessage(TRITONSERVER_Error* error) { return error->message.c_str(); }

}  // extern "C"

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--declared") {
    std::printf("%u %u\n", kTritonBackendApiMajor, kTritonBackendApiMinor);
    return 0;
  }
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <backend.so> <major> <minor> | --declared\n", argv[0]);
    return 2;
  }
  server_major = static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10));
  server_minor = static_cast<std::uint32_t>(std::strtoul(argv[3], nullptr, 10));
  void* backend = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
  if (backend == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  using Initialize = TRITONSERVER_Error* (*)(TRITONBACKEND_Backend*);
  auto initialize = reinterpret_cast<Initialize>(dlsym(backend, "TRITONBACKEND_Initialize"));
  if (initialize == nullptr) {
    std::fprintf(stderr, "dlsym: %s\n", dlerror());
    return 1;
  }
  TRITONSERVER_Error* error = initialize(nullptr);
  if (error == nullptr) {
    std::printf("accepted\n");
  } else {
    const std::string code = error->code == TRITONSERVER_ERROR_UNSUPPORTED
                                 ? "UNSUPPORTED"
                                 : "code-" + std::to_string(static_cast<int>(error->code));
    std::printf("refused %s %s\n", code.c_str(), error->message.c_str());
    TRITONSERVER_ErrorDelete(error);
  }
  return 0;
}
