// The op database entry of add_.Tensor: what judges and measures its overrides.
#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>

#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"

namespace native_ops::kernels {

namespace {

using samples::Fill;
using samples::laid_out;
using samples::Layout;

constexpr const char* kFlatAdd = "add__Tensor_cpp_0";

// The flat kernel's domain: its cond must accept exactly these.
bool flat_add_handles(const at::Tensor& self, const at::Tensor& other) {
  const auto dtype = self.scalar_type();
  if (dtype != at::kFloat && dtype != at::kDouble) return false;
  if (other.scalar_type() != dtype || self.sizes() != other.sizes() || self.numel() == 0) return false;
  if (!self.is_contiguous() || !other.is_contiguous()) return false;
  const at::MemOverlapStatus overlap = at::get_overlap_status(self, other);
  return overlap == at::MemOverlapStatus::No || overlap == at::MemOverlapStatus::Full;
}

std::vector<Sample> add_samples(c10::Device device, c10::ScalarType dtype) {
  std::vector<Sample> all;
  uint64_t seed = 200;
  const bool integral = at::isIntegralType(dtype, /*includeBool=*/false);
  const at::Scalar one = integral ? at::Scalar(int64_t{1}) : at::Scalar(1.0);
  const at::Scalar scaled = integral ? at::Scalar(int64_t{3}) : at::Scalar(-2.5);
  auto push = [&](SampleClass sample_class, const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
    std::vector<std::string> meant_for;
    if (flat_add_handles(self, other)) meant_for.push_back(kFlatAdd);
    all.push_back({samples::describe(self) + " += " + c10::str(alpha) + " * " + samples::describe(other),
                   sample_class,
                   {self, other, alpha},
                   meant_for});
  };
  auto add = [&](SampleClass sample_class, std::vector<int64_t> self_sizes, std::vector<int64_t> other_sizes,
                 const at::Scalar& alpha, Fill fs, Fill fo) {
    fs.seed = ++seed;
    fo.seed = ++seed;
    push(sample_class, samples::make_tensor(self_sizes, dtype, device, fs),
         samples::make_tensor(other_sizes, dtype, device, fo), alpha);
  };

  add(SampleClass::typical, {1000}, {1000}, one, {}, {});
  add(SampleClass::typical, {31, 33}, {31, 33}, scaled, {}, {});
  add(SampleClass::empty, {0}, {0}, one, {}, {});
  add(SampleClass::zero_dim, {}, {}, scaled, {}, {});
  add(SampleClass::one_element, {1}, {1}, one, {}, {});
  add(SampleClass::odd_sizes, {7, 13}, {7, 13}, scaled, {}, {});
  add(SampleClass::odd_sizes, {65}, {65}, one, {}, {});
  add(SampleClass::large, {(1 << 20) + 3}, {(1 << 20) + 3}, scaled, {}, {});
  add(SampleClass::transposed, {32, 33}, {32, 33}, one, laid_out(Layout::transposed), {});
  add(SampleClass::transposed, {32, 33}, {32, 33}, one, {}, laid_out(Layout::transposed));
  add(SampleClass::step_sliced, {40, 50}, {40, 50}, scaled, {}, laid_out(Layout::step_sliced));
  add(SampleClass::step_sliced, {40, 50}, {40, 50}, scaled, laid_out(Layout::step_sliced), {});
  add(SampleClass::expanded, {4, 5}, {5}, one, {}, {});  // broadcast
  add(SampleClass::expanded, {6, 40}, {6, 40}, scaled, {}, laid_out(Layout::expanded));
  {
    // self.add_(self): the same tensor twice.
    Fill fill;
    fill.seed = ++seed;
    const at::Tensor self = samples::make_tensor({257}, dtype, device, fill);
    push(SampleClass::odd_sizes, self, self, scaled);
  }
  if (!integral) {
    const Fill extreme = samples::with_extremes(dtype);
    add(SampleClass::extreme_values, {1031}, {1031}, one, extreme, extreme);
  }
  return all;
}

std::vector<ErrorSample> add_errors(c10::Device device) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  return {
      {"sizes differ: f32[3] += f32[4]",
       {at::ones({3}, f32), at::ones({4}, f32), at::Scalar(1.0)},
       "must match the size of tensor b"},
      {"self broadcast: f32[1] += f32[4]",
       {at::ones({1}, f32), at::ones({4}, f32), at::Scalar(1.0)},
       "doesn't match the broadcast shape"},
      {"float into int: i32[3] += f32[3]",
       {at::ones({3}, f32.dtype(at::kInt)), at::ones({3}, f32), at::Scalar(1.0)},
       "can't be cast to the desired output type"},
      {"bool alpha: f32[3] += true * f32[3]",
       {at::ones({3}, f32), at::ones({3}, f32), at::Scalar(true)},
       "Boolean alpha only supported"},
      {"self expanded: f32[3,4,5] (stride 0) += f32[3,4,5]",
       {at::ones({4, 5}, f32).expand({3, 4, 5}), at::ones({3, 4, 5}, f32), at::Scalar(1.0)},
       "more than one element of the written-to tensor refers to a single memory location"},
  };
}

Cost add_cost(const torch::jit::Stack& arguments) {
  const at::Tensor& self = arguments[0].toTensor();
  const double n = self.numel();
  return {3 * n * self.element_size(), 2 * n};
}

std::vector<BenchCase> add_bench_cases(c10::Device device) {
  std::vector<BenchCase> cases;
  for (const int64_t n : {int64_t{4}, int64_t{64}, int64_t{1024}, int64_t{16384}, int64_t{262144}, int64_t{4194304}}) {
    cases.push_back({"[" + std::to_string(n) + "]",
                     [n, device] {
                       Fill small;  // self grows by little over many repetitions
                       small.seed = 1;
                       small.low = -1e-6;
                       small.high = 1e-6;
                       return torch::jit::Stack{samples::make_tensor({n}, at::kFloat, device),
                                                samples::make_tensor({n}, at::kFloat, device, small), at::Scalar(1.0)};
                     },
                     {}});
  }
  return cases;
}

// Flat tensors of one element to 16M, odd sizes among them, up to 256 MiB a cell.
ShapeGrid add_grid(c10::Device) {
  ShapeGrid grid;
  grid.axes = {{"elements", {1, 127, 4096, 65537, 1 << 20, 1 << 24}}};
  grid.max_bytes = 256.0 * (1 << 20);
  grid.make_arguments = [](const std::vector<int64_t>& point, c10::ScalarType dtype, c10::Device device) {
    const auto options = at::TensorOptions().dtype(dtype).device(device);
    auto filled = [&] {
      at::Tensor t = at::empty({point[0]}, options);
      return at::isFloatingType(dtype) ? t.uniform_(-1, 1) : t.random_(-100, 100);
    };
    return torch::jit::Stack{filled(), filled(), at::Scalar(1)};
  };
  return grid;
}

}  // namespace

void register_add__op_db() {
  OpEntry entry;
  entry.op_symbol = "add_.Tensor";
  entry.dsls = {"cpp"};
  entry.devices = {c10::DeviceType::CPU};
  entry.dtypes = {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kInt, at::kLong};
  entry.differentiable = true;
  entry.samples = add_samples;
  entry.error_samples = add_errors;
  entry.cost = add_cost;
  entry.bench_cases = add_bench_cases;
  entry.grid = add_grid;
  register_op_entry(std::move(entry));
}

}  // namespace native_ops::kernels
