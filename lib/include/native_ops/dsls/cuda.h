#pragma once
// The `cuda` DSL: CUDA C++ kernels compiled into the library by nvcc. Available when this
// build has its CUDA parts (NATIVE_OPS_CUDA) and an NVIDIA driver is installed; the check
// reads /proc/driver/nvidia/version and never initialises CUDA.

#include <memory>

#include "native_ops/dsl.h"

namespace native_ops::builtin_dsls {

std::unique_ptr<Dsl> make_cuda_dsl();

}  // namespace native_ops::builtin_dsls
