// A third-party override pack: its own DSL, a typed override of aten::hypot at CPU and at
// CUDA, and the op database entry that `native-ops test` and `native-ops bench` judge it by.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/sqrt.h>

#include "native_ops/native_ops.h"
#include "native_ops/plugin.h"
#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"

namespace {

native_ops::Verdict same_shape(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes()) return native_ops::decline("broadcasting hypot is left to aten");
  return true;
}

std::vector<native_ops::Sample> hypot_samples(const std::vector<std::string>& nodes, c10::Device device,
                                              c10::ScalarType dtype) {
  auto make = [&](std::vector<int64_t> sizes, uint64_t seed) {
    native_ops::samples::Fill fill;
    fill.seed = seed;
    return native_ops::samples::make_tensor(sizes, dtype, device, fill);
  };
  return {{"[16,9] and [16,9]", native_ops::SampleClass::typical, {make({16, 9}, 1), make({16, 9}, 2)}, nodes},
          {"[16,9] and [9]", native_ops::SampleClass::expanded, {make({16, 9}, 3), make({9}, 4)}, {}}};
}

void register_vendor_overrides() {
  native_ops::register_dsl(native_ops::make_compiled_in_dsl("vendor", "0.1"));
  std::vector<std::string> nodes;
  for (const c10::DispatchKey key : {c10::DispatchKey::CPU, c10::DispatchKey::CUDA}) {
    nodes.push_back(native_ops::register_op_override<at::_ops::hypot>(
        "vendor", key, &same_shape, [](const at::Tensor& a, const at::Tensor& b) { return at::sqrt(a * a + b * b); }));
  }

  native_ops::OpEntry entry;
  entry.op_symbol = "hypot";
  entry.dsls = {"vendor"};
  entry.devices = {c10::DeviceType::CPU, c10::DeviceType::CUDA};
  entry.dtypes = {at::kFloat, at::kDouble};
  entry.differentiable = true;
  entry.samples = [nodes](c10::Device device, c10::ScalarType dtype) { return hypot_samples(nodes, device, dtype); };
  entry.cost = [](const torch::jit::Stack& args) {
    return native_ops::Cost{3.0 * args[0].toTensor().nbytes(), 4.0 * args[0].toTensor().numel()};
  };
  entry.bench_cases = [](c10::Device device) {
    return std::vector<native_ops::BenchCase>{
        {"[4096]",
         [device] {
           return torch::jit::Stack{at::rand({4096}, device), at::rand({4096}, device)};
         },
         {}},
        {"[16777216]",
         [device] {
           return torch::jit::Stack{at::rand({1 << 24}, device), at::rand({1 << 24}, device)};
         },
         {}}};
  };
  native_ops::register_op_entry(std::move(entry));
}

}  // namespace

NATIVE_OPS_PLUGIN(register_vendor_overrides)
