// The op database entry of hypot: what `native-ops test` and `native-ops bench` judge the
// override of cpp.cpp by.
#include <ATen/ATen.h>

#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"

namespace native_ops::kernels {

namespace {

std::vector<Sample> hypot_samples(c10::Device device, c10::ScalarType dtype) {
  using samples::Fill;
  auto make = [&](std::vector<int64_t> sizes, uint64_t seed, Fill fill = {}) {
    fill.seed = seed;
    return samples::make_tensor(sizes, dtype, device, fill);
  };
  const std::vector<std::string> fires = {"hypot_cpp_0"};
  Fill huge = samples::with_extremes(dtype);
  return {
      {"[16,9] and [16,9]", SampleClass::typical, {make({16, 9}, 1), make({16, 9}, 2)}, fires},
      {"[0] and [0]", SampleClass::empty, {make({0}, 3), make({0}, 4)}, fires},
      {"[] and []", SampleClass::zero_dim, {make({}, 5), make({}, 6)}, fires},
      {"[1] and [1]", SampleClass::one_element, {make({1}, 7), make({1}, 8)}, fires},
      {"[7,13] and [7,13]", SampleClass::odd_sizes, {make({7, 13}, 9), make({7, 13}, 10)}, fires},
      {"[1048576] and [1048576]", SampleClass::large, {make({1 << 20}, 11), make({1 << 20}, 12)}, fires},
      {"[16,9] transposed and [16,9]",
       SampleClass::transposed,
       {make({16, 9}, 13, samples::laid_out(samples::Layout::transposed)), make({16, 9}, 14)},
       {}},
      {"[16,9] step 2 and [16,9]",
       SampleClass::step_sliced,
       {make({16, 9}, 15, samples::laid_out(samples::Layout::step_sliced)), make({16, 9}, 16)},
       {}},
      {"[16,9] and [9] (broadcast)", SampleClass::expanded, {make({16, 9}, 17), make({9}, 18)}, {}},
      {"[64] with extremes", SampleClass::extreme_values, {make({64}, 19, huge), make({64}, 20, huge)}, fires},
  };
}

}  // namespace

void register_hypot_op_db() {
  OpEntry entry;
  entry.op_symbol = "hypot";
  entry.dsls = {"cpp"};
  entry.devices = {c10::DeviceType::CPU};
  entry.dtypes = {at::kFloat, at::kDouble};
  entry.differentiable = true;
  entry.samples = hypot_samples;
  entry.cost = [](const torch::jit::Stack& args) {
    return Cost{3.0 * static_cast<double>(args[0].toTensor().nbytes()), 4.0 * args[0].toTensor().numel()};
  };
  entry.bench_cases = [](c10::Device device) {
    std::vector<BenchCase> cases;
    for (const int64_t n : {int64_t{4096}, int64_t{16777216}}) {
      cases.push_back({"[" + std::to_string(n) + "]",
                       [n, device] {
                         return torch::jit::Stack{samples::make_tensor({n}, at::kFloat, device),
                                                  samples::make_tensor({n}, at::kFloat, device)};
                       },
                       {}});
    }
    return cases;
  };
  register_op_entry(std::move(entry));
}

}  // namespace native_ops::kernels
