#include "native_ops/dsls/triton.h"

#include "nvidia_driver.h"

namespace native_ops::builtin_dsls {

namespace {

class TritonDsl final : public Dsl {
 public:
  std::string_view name() const override { return "triton"; }
  bool runtime_available() const override { return built() && nvidia_driver_version().has_value(); }
  std::string runtime_version() const override {
    return runtime_available() ? "Triton " NATIVE_OPS_TRITON_VERSION " (ahead of time)" : "";
  }
  std::string unavailable_reason() const override {
    if (!built()) {
      return "this build holds no Triton kernels: configure with triton==3.6.0 importable by the build's Python";
    }
    if (!nvidia_driver_version()) return "no NVIDIA driver is loaded (/proc/driver/nvidia/version is missing): run on a machine with an NVIDIA GPU and its driver";
    return "";
  }

 private:
  static bool built() { return NATIVE_OPS_WITH_TRITON != 0; }
};

}  // namespace

std::unique_ptr<Dsl> make_triton_dsl() { return std::make_unique<TritonDsl>(); }

}  // namespace native_ops::builtin_dsls
