# Finds jitfuse's dependencies. Shared by the build and by the installed
# package config, so a consumer resolves the same imported targets.
find_package(fmt REQUIRED)
find_package(CUDAToolkit REQUIRED)
# LLVMConfig.cmake drags in FFI/terminfo probes we do not need; locate the
# two pieces we use directly.
find_path(JITFUSE_LLVM_INCLUDE llvm/ADT/SmallVector.h REQUIRED
  HINTS /usr/lib/llvm-14/include)
find_library(JITFUSE_LLVM_SUPPORT libLLVMSupport.a REQUIRED
  HINTS /usr/lib/llvm-14/lib)

# LLVM ADT headers + static LLVMSupport (SmallVector growth, DenseMap, raw_ostream).
if(NOT TARGET jitfuse_llvm)
  add_library(jitfuse_llvm INTERFACE IMPORTED GLOBAL)
  target_include_directories(jitfuse_llvm SYSTEM INTERFACE ${JITFUSE_LLVM_INCLUDE})
  target_link_libraries(jitfuse_llvm INTERFACE ${JITFUSE_LLVM_SUPPORT} tinfo z)
endif()

# NVRTC without CUDA::nvrtc's dependency on CUDA::cuda_driver: the driver is
# dlopen'ed at run time, and linking its stub would make every binary need
# libcuda.so.1 wherever GCC does not pass --as-needed (it does not with
# -fsanitize, which broke the sanitizer job on machines without a driver).
if(NOT TARGET jitfuse_nvrtc)
  add_library(jitfuse_nvrtc INTERFACE IMPORTED GLOBAL)
  target_link_libraries(jitfuse_nvrtc INTERFACE "${CUDA_nvrtc_LIBRARY}")
endif()

# xxHash is used header-only (XXH_INLINE_ALL): no shared library to ship.
find_path(JITFUSE_XXHASH_INCLUDE xxhash.h REQUIRED)
if(NOT TARGET jitfuse_xxhash)
  add_library(jitfuse_xxhash INTERFACE IMPORTED GLOBAL)
  target_include_directories(jitfuse_xxhash SYSTEM INTERFACE ${JITFUSE_XXHASH_INCLUDE})
  target_compile_definitions(jitfuse_xxhash INTERFACE XXH_INLINE_ALL)
endif()
