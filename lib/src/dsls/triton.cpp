#include "native_ops/dsls/triton.h"

#include <string>

#include "dsls/triton_artifacts.h"
#include "nvidia_driver.h"

namespace native_ops::builtin_dsls {

std::unique_ptr<Dsl> make_triton_dsl() {
  // The kernels embedded at build time say whether there are any, and which Triton made them.
  const bool built = triton::artifacts().size > 0;
  return make_nvidia_dsl("triton", built,
                         "Triton " + std::string(triton::compiler_version()) + " (ahead of time, sm_90)",
                         built ? "" : NATIVE_OPS_TRITON_MISSING);
}

}  // namespace native_ops::builtin_dsls
