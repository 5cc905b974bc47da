#include "native_ops/dsls/cuda.h"

#include "nvidia_driver.h"

namespace native_ops::builtin_dsls {

std::unique_ptr<Dsl> make_cuda_dsl() {
  return make_nvidia_dsl("cuda", NATIVE_OPS_WITH_CUDA != 0, "CUDA " NATIVE_OPS_CUDA_VERSION,
                         "this build has no CUDA parts: configure with a CUDA libtorch and nvcc (-DNATIVE_OPS_CUDA=ON)");
}

}  // namespace native_ops::builtin_dsls
