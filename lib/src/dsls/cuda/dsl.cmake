# The cuda DSL: conds and impls in host C++ without CUDA headers, always compiled into the
# runtime; the ops' device code (cuda_kernels.cu) in libnative_ops_cuda_kernels.so, which
# the runtime loads on the first call of a cuda impl (kernels_library.h).
target_sources(native_ops_runtime_objects PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/dsl.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels_library.cpp)

# SASS for sm_90 (the H200) and PTX for compute_80, which the driver compiles for any other
# GPU from Ampere on; there the kernels take none of their sm_90 paths (runs_sm90_code() in
# common.cuh). It shares libtorch's CUDA runtime (libcudart.so, already loaded when
# a CUDA tensor exists) and exports only its entry points (abi.h).
if(NATIVE_OPS_CUDA)
  add_library(native_ops_cuda_kernels SHARED ${CMAKE_CURRENT_LIST_DIR}/kernels_library.cu)
  target_include_directories(native_ops_cuda_kernels PRIVATE ${PROJECT_SOURCE_DIR}/lib/src)
  set_target_properties(native_ops_cuda_kernels PROPERTIES
    CUDA_ARCHITECTURES "90-real;80-virtual"
    CUDA_RUNTIME_LIBRARY Shared
    CUDA_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden)
  target_compile_options(native_ops_cuda_kernels PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-O3 --expt-relaxed-constexpr>)
  # Built with the runtime, so that the runtime is never without its kernels: a dependency of
  # the runtime's libraries, not of their objects, whose compiles and Triton artifacts would
  # otherwise wait for this library's link (the longest nvcc compile).
  add_dependencies(native_ops_runtime native_ops_cuda_kernels)
  add_dependencies(native_ops_runtime_internal native_ops_cuda_kernels)
endif()

function(native_ops_dsl_cuda_sources op)
  native_ops_kernel_sources(device ${op} cuda cu ${ARGN})
  if(TARGET native_ops_cuda_kernels)
    target_sources(native_ops_cuda_kernels PRIVATE ${device})
  endif()
endfunction()
