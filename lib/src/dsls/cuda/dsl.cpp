// The `cuda` DSL: its descriptor (native_ops::Dsl), listed in the DSL table (lib/src/dsls/dsls.cmake).
#include <memory>

#include "dsls/nvidia_driver.h"
#include "native_ops/dsl.h"

namespace native_ops::builtin_dsls {

std::unique_ptr<Dsl> make_cuda_dsl() {
  return make_nvidia_dsl(
      "cuda", NATIVE_OPS_WITH_CUDA != 0, "CUDA " NATIVE_OPS_CUDA_VERSION,
      "this build has no CUDA parts: configure with a CUDA libtorch and nvcc (-DNATIVE_OPS_CUDA=ON)");
}

}  // namespace native_ops::builtin_dsls
