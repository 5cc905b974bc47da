#include "native_ops/dsls/triton.h"

#include "nvidia_driver.h"

namespace native_ops::builtin_dsls {

std::unique_ptr<Dsl> make_triton_dsl() {
  return make_nvidia_dsl(
      "triton", NATIVE_OPS_WITH_TRITON != 0, "Triton " NATIVE_OPS_TRITON_VERSION " (ahead of time)",
      "this build holds no Triton kernels: configure with triton==3.6.0 importable by the build's Python");
}

}  // namespace native_ops::builtin_dsls
