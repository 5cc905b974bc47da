// The op database entry of multinomial (cuda at CUDA): what judges and measures its
// override. Every sample draws from its own generator: the conformance run gives each call
// a copy in the sample's state, so that the routed and the original call draw alike.
#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>

#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

using samples::Fill;
using samples::laid_out;
using samples::Layout;

constexpr const char* kNode = "multinomial_cuda_0";

// The cuda kernel's domain: one sample a row of contiguous 1-D or 2-D probabilities; but
// where aten is as fast (speed.h).
bool cuda_handles(const at::Tensor& self, int64_t num_samples) {
  return num_samples == 1 && (self.dim() == 1 || self.dim() == 2) && self.numel() > 0 && self.is_contiguous() &&
         cuda_multinomial_slower_than_aten(self.size(-1)) == nullptr;
}

at::Generator seeded_generator(c10::Device device, uint64_t seed) {
  at::Generator generator = at::globalContext().defaultGenerator(device).clone();
  generator.set_current_seed(seed);
  return generator;
}

std::vector<Sample> multinomial_samples(c10::Device device, c10::ScalarType dtype) {
  std::vector<Sample> all;
  uint64_t seed = 1500;
  auto add_tensor = [&](SampleClass sample_class, const at::Tensor& self, int64_t num_samples, bool replacement,
                        const std::string& note) {
    std::vector<std::string> meant_for;
    if (cuda_handles(self, num_samples)) meant_for.push_back(kNode);
    all.push_back({samples::describe(self) + ", " + std::to_string(num_samples) + " sample" +
                       (replacement ? ", with replacement" : "") + note,
                   sample_class,
                   {self, num_samples, replacement, seeded_generator(device, ++seed)},
                   meant_for});
  };
  // Probabilities in [0, 1), about one in five zero (as after top-k or top-p masking): a
  // quarter of the range below zero, clamped. Views keep [0, 1) (an expanded one cannot be
  // written in place).
  auto probabilities = [&](std::vector<int64_t> sizes, Fill fill = {}) {
    const bool contiguous = fill.layout == Layout::contiguous;
    fill.seed = ++seed;
    fill.low = contiguous ? -0.25 : 0;
    fill.high = 1;
    at::Tensor p = samples::make_tensor(sizes, dtype, device, fill);
    return contiguous ? p.clamp_min_(0) : p;
  };
  auto add = [&](SampleClass sample_class, std::vector<int64_t> sizes, Fill fill = {}) {
    add_tensor(sample_class, probabilities(sizes, fill), 1, false, "");
  };

  add(SampleClass::typical, {64, 50});  // top-k sampling's k of decode rows
  add(SampleClass::typical, {1, 50});
  add(SampleClass::typical, {100});  // one distribution
  add(SampleClass::typical, {8, 32000});
  add_tensor(SampleClass::typical, probabilities({64, 50}), 1, true, "");   // one sample: replacement alike
  add_tensor(SampleClass::typical, probabilities({64, 50}), 3, false, "");  // aten
  add_tensor(SampleClass::typical, probabilities({64, 50}), 2, true, "");   // aten
  {
    // A row of one positive probability among zeros: the sample must be it.
    at::Tensor one_hot = at::zeros({16, 40}, at::TensorOptions().dtype(dtype).device(device));
    one_hot.select(1, 37).fill_(0.5);
    one_hot.select(0, 3).zero_().select(0, 0).fill_(1);
    add_tensor(SampleClass::typical, one_hot, 1, false, ", one positive a row");
  }
  add(SampleClass::empty, {0, 50});
  add(SampleClass::one_element, {1, 1});
  add(SampleClass::one_element, {1});
  add(SampleClass::odd_sizes, {7, 127});
  add(SampleClass::odd_sizes, {3, 50257});
  add(SampleClass::large, {64, 128256});  // sampling a whole vocabulary: 1024-thread blocks
  add(SampleClass::large, {2, 9000});
  add(SampleClass::transposed, {50, 64}, laid_out(Layout::transposed));  // aten
  add(SampleClass::step_sliced, {64, 50}, laid_out(Layout::step_sliced));
  add(SampleClass::expanded, {64, 50}, laid_out(Layout::expanded));
  {
    // Extremes a valid distribution may hold: the largest finite values (quotients that
    // overflow to inf in 16-bit), subnormal ones (quotients that round to zero), and equal
    // ones (ties decided by the draws).
    at::Tensor extreme = probabilities({32, 64});
    extreme.select(0, 0).fill_(samples::large_magnitude(dtype));
    extreme.select(0, 1).fill_(dtype == at::kFloat ? 1e-44 : dtype == at::kHalf ? 6e-8 : 1e-40);
    extreme.select(0, 2).fill_(0.25);
    extreme.select(1, 5).fill_(samples::large_magnitude(dtype));
    add_tensor(SampleClass::extreme_values, extreme, 1, false, ", largest, subnormal and equal probabilities");
  }
  return all;
}

// aten's checks before any draw; the cond declines each call, so aten raises them.
std::vector<ErrorSample> multinomial_errors(c10::Device device) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  return {
      {"no sample: f32[4,5], 0 samples",
       {at::ones({4, 5}, f32), int64_t{0}, false, c10::IValue()},
       "cannot sample n_sample <= 0 samples"},
      {"a 3-D input: f32[2,4,5]",
       {at::ones({2, 4, 5}, f32), int64_t{1}, false, c10::IValue()},
       "prob_dist must be 1 or 2 dim"},
      {"int64 probabilities: i64[4,5]",
       {at::ones({4, 5}, f32.dtype(at::kLong)), int64_t{1}, false, c10::IValue()},
       "multinomial only supports floating-point dtypes for input"},
  };
}

// The draws written, then the probabilities and the draws read; an index written a row.
Cost multinomial_cost(const torch::jit::Stack& arguments) {
  const at::Tensor& self = arguments[0].toTensor();
  const int64_t width = self.dim() == 0 ? 1 : self.size(-1);
  const double rows = width == 0 ? 0 : static_cast<double>(self.numel() / width);
  return {3.0 * static_cast<double>(self.nbytes()) + rows * 8, static_cast<double>(self.numel())};
}

torch::jit::Stack multinomial_arguments(int64_t rows, int64_t width, c10::ScalarType dtype, c10::Device device) {
  const at::Tensor p = at::empty({rows, width}, at::TensorOptions().dtype(dtype).device(device)).uniform_(0, 1);
  return {p, int64_t{1}, false, c10::IValue()};
}

// Decode rows sampling top-k's k or a whole vocabulary.
std::vector<BenchCase> multinomial_bench_cases(c10::Device device) {
  std::vector<BenchCase> cases;
  for (const c10::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    for (const auto& [rows, width] :
         std::vector<std::pair<int64_t, int64_t>>{{64, 50}, {1, 50}, {64, 1024}, {64, 50257}, {8, 128256}}) {
      cases.push_back({dtype_name(dtype) + " [" + std::to_string(rows) + "," + std::to_string(width) + "]",
                       [=] { return multinomial_arguments(rows, width, dtype, device); },
                       {}});
    }
  }
  return cases;
}

// Decode and prefill rows times top-k's k, top-p's few hundred and whole vocabularies.
ShapeGrid multinomial_grid(c10::Device) {
  ShapeGrid grid;
  grid.axes = {{"rows", {1, 8, 64, 256, 2048}}, {"width", {50, 127, 1024, 32000, 50257, 128256, 151936, 262144}}};
  grid.make_arguments = [](const std::vector<int64_t>& point, c10::ScalarType dtype, c10::Device device) {
    return multinomial_arguments(point[0], point[1], dtype, device);
  };
  grid.impl_correct_for = [](const std::vector<int64_t>&, c10::ScalarType) { return std::vector<std::string>{kNode}; };
  return grid;
}

}  // namespace

void register_multinomial_op_db() {
  OpEntry entry;
  entry.op_symbol = "multinomial";
  entry.dsls = {"cuda"};
  entry.devices = {c10::DeviceType::CUDA};
  entry.dtypes = {at::kBFloat16, at::kHalf, at::kFloat};
  entry.upcast_reference = false;  // float64 draws other numbers: only the same dtype's call compares
  entry.inapplicable_classes = {
      {SampleClass::zero_dim, "multinomial takes 1-D or 2-D tensors only: a 3-D one is an error sample"}};
  entry.samples = multinomial_samples;
  entry.error_samples = multinomial_errors;
  entry.cost = multinomial_cost;
  entry.bench_cases = multinomial_bench_cases;
  entry.grid = multinomial_grid;
  register_op_entry(std::move(entry));
}

}  // namespace native_ops::kernels
