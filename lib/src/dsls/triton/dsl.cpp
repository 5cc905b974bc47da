// The `triton` DSL: its descriptor (native_ops::Dsl), listed in the DSL table (lib/src/dsls/dsls.cmake).
#include <memory>
#include <string>

#include "dsls/nvidia_driver.h"
#include "dsls/triton/artifacts.h"
#include "native_ops/dsl.h"

namespace native_ops::builtin_dsls {

std::unique_ptr<Dsl> make_triton_dsl() {
  // The kernels embedded at build time say whether there are any, and which Triton made them.
  const bool built = triton::artifacts().size > 0;
  return make_nvidia_dsl("triton", built,
                         "Triton " + std::string(triton::compiler_version()) + " (ahead of time, sm_90)",
                         built ? "" : NATIVE_OPS_TRITON_MISSING);
}

}  // namespace native_ops::builtin_dsls
