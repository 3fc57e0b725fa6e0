# Where the CUDA toolkit is, for TorchConfig.cmake of a CUDA build of torch: CUDA_HOME (torch's
# extension builds read it too), else CUDA_PATH, else /usr/local/cuda. Included by CMakeLists.txt and
# by the installed externspecConfig.cmake before they look for Torch; a CUDA_TOOLKIT_ROOT_DIR given
# by the user wins.
if(NOT DEFINED CUDA_TOOLKIT_ROOT_DIR)
  if(DEFINED ENV{CUDA_HOME})
    set(CUDA_TOOLKIT_ROOT_DIR "$ENV{CUDA_HOME}")
  elseif(DEFINED ENV{CUDA_PATH})
    set(CUDA_TOOLKIT_ROOT_DIR "$ENV{CUDA_PATH}")
  elseif(EXISTS "/usr/local/cuda/include/cuda_runtime_api.h")
    set(CUDA_TOOLKIT_ROOT_DIR "/usr/local/cuda")
  endif()
endif()
