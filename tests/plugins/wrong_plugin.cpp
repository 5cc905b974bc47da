// An override pack with a bug: its atan2 is off by 1e-3. `native-ops test` must catch it
// and exit 1.
#include <ATen/core/Tensor.h>

#include "native_ops/native_ops.h"
#include "native_ops/plugin.h"
#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"

namespace {

void register_wrong_overrides() {
  native_ops::register_dsl(native_ops::make_compiled_in_dsl("wrong", "0.1"));
  const std::string node = native_ops::register_op_override<at::_ops::atan2>(
      "wrong", c10::DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) -> native_ops::Verdict { return true; },
      [](const at::Tensor& a, const at::Tensor& b) {
        return native_ops::call_original<at::_ops::atan2>(a, b).add_(1e-3);
      });
  native_ops::OpEntry entry;
  entry.op_symbol = "atan2";
  entry.dsls = {"wrong"};
  entry.devices = {c10::DeviceType::CPU};
  entry.dtypes = {at::kFloat};
  entry.samples = [node](c10::Device device, c10::ScalarType dtype) {
    return std::vector<native_ops::Sample>{{"[5,7] and [5,7]",
                                            native_ops::SampleClass::typical,
                                            {native_ops::samples::make_tensor({5, 7}, dtype, device),
                                             native_ops::samples::make_tensor({5, 7}, dtype, device)},
                                            {node}}};
  };
  entry.cost = [](const torch::jit::Stack&) { return native_ops::Cost{}; };
  entry.bench_cases = [](c10::Device) { return std::vector<native_ops::BenchCase>{}; };
  native_ops::register_op_entry(std::move(entry));
}

}  // namespace

NATIVE_OPS_PLUGIN(register_wrong_overrides)
