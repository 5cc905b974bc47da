#include "native_ops/dsls/cuda.h"

#include "nvidia_driver.h"

namespace native_ops::builtin_dsls {

namespace {

class CudaDsl final : public Dsl {
 public:
  std::string_view name() const override { return "cuda"; }
  bool runtime_available() const override { return built() && nvidia_driver_version().has_value(); }
  std::string runtime_version() const override {
    const auto driver = nvidia_driver_version();
    return runtime_available() ? "CUDA " NATIVE_OPS_CUDA_VERSION ", driver " + *driver : "";
  }
  std::string unavailable_reason() const override {
    if (!built()) return "this build has no CUDA parts: configure with a CUDA libtorch and nvcc (-DNATIVE_OPS_CUDA=ON)";
    if (!nvidia_driver_version()) return "no NVIDIA driver is loaded (/proc/driver/nvidia/version is missing): run on a machine with an NVIDIA GPU and its driver";
    return "";
  }

 private:
  static bool built() { return NATIVE_OPS_WITH_CUDA != 0; }
};

}  // namespace

std::unique_ptr<Dsl> make_cuda_dsl() { return std::make_unique<CudaDsl>(); }

}  // namespace native_ops::builtin_dsls
