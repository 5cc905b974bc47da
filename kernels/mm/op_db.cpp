// The op database entry of mm (cpp at CUDA): what judges and measures its override.
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

constexpr const char* kPaddedMm = "mm_cpp_0";

// The padded override's domain: its cond must accept exactly these. 16-bit calls where n
// is not a multiple of 8, or k is not where an operand runs along it (a row-major self, a
// column-major mat2), or an operand is not a row- or column-major matrix with a leading
// dimension of a multiple of 8; of 10^9 flops or more and 5 10^8 a copy or zeroing it
// launches, and at least 512 flops an element it copies (the operands it re-lays, the
// output when n is padded).
bool padded_handles(const at::Tensor& a, const at::Tensor& b) {
  const auto dtype = a.scalar_type();
  if ((dtype != at::kBFloat16 && dtype != at::kHalf) || a.numel() == 0 || b.numel() == 0) return false;
  const double m = a.size(0), k = a.size(1), n = b.size(1);
  const auto column_major = [](const at::Tensor& x) { return x.stride(0) == 1 && x.stride(1) != 1; };
  const auto laid_as_is = [](const at::Tensor& x) {
    const bool row_major = x.stride(1) == 1 && x.stride(0) % 8 == 0 && x.stride(0) >= x.size(1);
    const bool column_major = x.stride(0) == 1 && x.stride(1) % 8 == 0 && x.stride(1) >= x.size(0);
    return row_major || column_major;
  };
  const bool k_padded = a.size(1) % 8 != 0 && (!column_major(a) || column_major(b));
  const bool n_padded = b.size(1) % 8 != 0;
  const bool copy_a = k_padded || !laid_as_is(a), copy_b = k_padded || n_padded || !laid_as_is(b);
  if (!copy_a && !copy_b) return false;
  const double copied = (copy_a ? m * k : 0) + (copy_b ? k * n : 0) + (n_padded ? m * n : 0);
  const int launches = (copy_a ? 1 + k_padded : 0) + (copy_b ? 1 + k_padded : 0) + n_padded;
  const double flops = 2 * m * n * k;
  return flops >= 1e9 && flops >= 5e8 * launches && flops >= 512 * copied;
}

struct MmShape {
  int64_t m, k, n;
};

std::vector<Sample> mm_samples(c10::Device device, c10::ScalarType dtype) {
  std::vector<Sample> all;
  uint64_t seed = 0;
  // Values in [-1, 1], as GEMM tests take them: the tolerances below are sized for sums of
  // such products.
  auto add = [&](SampleClass sample_class, MmShape s, Fill fa, Fill fb) {
    for (Fill* fill : {&fa, &fb}) {
      fill->seed = ++seed;
      fill->low = -1;
      fill->high = 1;
    }
    const at::Tensor a = samples::make_tensor({s.m, s.k}, dtype, device, fa);
    const at::Tensor b = samples::make_tensor({s.k, s.n}, dtype, device, fb);
    std::vector<std::string> meant_for;
    if (padded_handles(a, b)) meant_for.push_back(kPaddedMm);
    all.push_back({samples::describe(a) + " x " + samples::describe(b), sample_class, {a, b}, meant_for});
  };
  const Fill transposed = laid_out(Layout::transposed);

  add(SampleClass::typical, {1024, 1024, 1001}, {}, {});  // n padded, the output copied out
  add(SampleClass::typical, {1024, 1024, 1024}, {}, {});  // aligned: declined
  add(SampleClass::typical, {64, 1024, 1001}, {}, {});    // under 10^9 flops: declined
  add(SampleClass::empty, {0, 1001, 1024}, {}, {});
  add(SampleClass::empty, {1024, 0, 1001}, {}, {});
  add(SampleClass::one_element, {1, 1, 1}, {}, {});
  add(SampleClass::odd_sizes, {1000, 1001, 1024}, {}, {});  // k padded with zeros
  add(SampleClass::odd_sizes, {1023, 1025, 1027}, {}, {});  // every size odd: five launches, declined
  add(SampleClass::odd_sizes, {2047, 1025, 1027}, {}, {});
  add(SampleClass::odd_sizes, {3, 5, 7}, {}, {});
  add(SampleClass::large, {2048, 2048, 1001}, {}, {});
  add(SampleClass::transposed, {1000, 1024, 1001}, transposed, transposed);  // x @ W.t(), n odd
  add(SampleClass::transposed, {1001, 1024, 1024}, transposed, {});          // column-major, odd leading dimension
  add(SampleClass::transposed, {1001, 1025, 1024}, transposed, transposed);  // both column-major, k padded
  add(SampleClass::transposed, {1024, 1001, 1024}, transposed, {});          // k odd, strided across: declined
  add(SampleClass::step_sliced, {1024, 1024, 1024}, laid_out(Layout::step_sliced), {});
  add(SampleClass::step_sliced, {1024, 1024, 1024}, {}, laid_out(Layout::step_sliced));
  add(SampleClass::expanded, {1024, 1024, 1001}, laid_out(Layout::expanded), {});
  Fill extreme = samples::with_extremes(dtype);
  add(SampleClass::extreme_values, {1024, 1024, 1001}, extreme, {});
  add(SampleClass::extreme_values, {1000, 1001, 1024}, {}, extreme);
  // A decode step of a vocabulary head: the copy of the weight costs more than it saves.
  add(SampleClass::large, {8, 2048, 32001}, {}, transposed);
  return all;
}

std::vector<ErrorSample> mm_errors(c10::Device device) {
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16).device(device);
  const auto f16 = at::TensorOptions().dtype(at::kHalf).device(device);
  return {
      {"inner sizes differ: bf16[4,1001] x bf16[1000,8]",
       {at::ones({4, 1001}, bf16), at::ones({1000, 8}, bf16)},
       "mat1 and mat2 shapes cannot be multiplied"},
      {"3-D self: bf16[2,4,1001] x bf16[1001,8]",
       {at::ones({2, 4, 1001}, bf16), at::ones({1001, 8}, bf16)},
       "self must be a matrix"},
      {"1-D mat2: bf16[4,1001] x bf16[1001]",
       {at::ones({4, 1001}, bf16), at::ones({1001}, bf16)},
       "mat2 must be a matrix"},
      {"dtypes differ: bf16[4,1001] x f16[1001,8]",
       {at::ones({4, 1001}, bf16), at::ones({1001, 8}, f16)},
       "to have the same dtype, but got"},
  };
}

Cost mm_cost(const torch::jit::Stack& arguments) {
  const at::Tensor& a = arguments[0].toTensor();
  const at::Tensor& b = arguments[1].toTensor();
  const double m = a.size(0), k = a.size(1), n = b.size(1);
  return {(m * k + k * n + m * n) * a.element_size(), 2 * m * n * k};
}

// `transposed`: 2 for a column-major self, 1 for a column-major mat2 (x @ W.t()), as the
// op's features count it.
torch::jit::Stack mm_arguments(MmShape s, int64_t transposed, c10::ScalarType dtype, c10::Device device) {
  const auto options = at::TensorOptions().dtype(dtype).device(device);
  const at::Tensor a = (transposed & 2) ? at::empty({s.k, s.m}, options).uniform_(-1, 1).t()
                                        : at::empty({s.m, s.k}, options).uniform_(-1, 1);
  const at::Tensor b = (transposed & 1) ? at::empty({s.n, s.k}, options).uniform_(-1, 1).t()
                                        : at::empty({s.k, s.n}, options).uniform_(-1, 1);
  return {a, b};
}

// The vocabulary head of a 50257-token model (forward, both gradients), a decode step of
// it, and an aligned GEMM.
std::vector<BenchCase> mm_bench_cases(c10::Device device) {
  struct Case {
    const char* what;
    MmShape shape;
    int64_t transposed;
  };
  std::vector<BenchCase> cases;
  for (const c10::ScalarType dtype : {at::kBFloat16, at::kHalf, at::kFloat}) {
    for (const Case& c : std::vector<Case>{{"x @ W.t()", {4096, 2048, 50257}, 1},
                                           {"dL @ W", {4096, 50257, 2048}, 0},
                                           {"x.t() @ dL", {2048, 4096, 50257}, 2},
                                           {"x @ W.t()", {8, 2048, 50257}, 1},
                                           {"x @ W.t()", {4096, 4096, 4096}, 1}}) {
      const MmShape s = c.shape;
      const std::string shape = dtype_name(dtype) + " " + c.what + " [" + std::to_string(s.m) + "," +
                                std::to_string(s.k) + "]x[" + std::to_string(s.k) + "," + std::to_string(s.n) + "]";
      cases.push_back({shape, [s, t = c.transposed, dtype, device] { return mm_arguments(s, t, dtype, device); }, {}});
    }
  }
  return cases;
}

// Token rows from a decode step to a training batch, inner sizes and columns of model
// widths and vocabularies with odd ones among them, in the three layouts of a linear
// layer's forward and gradients.
ShapeGrid mm_grid(c10::Device) {
  ShapeGrid grid;
  grid.axes = {{"m", {1, 8, 64, 256, 1024, 4096}},
               {"k", {127, 768, 4096, 50257}},
               {"n", {127, 1001, 4096, 50257}},
               {"transposed", {0, 1, 2}}};
  grid.make_arguments = [](const std::vector<int64_t>& point, c10::ScalarType dtype, c10::Device device) {
    return mm_arguments({point[0], point[1], point[2]}, point[3], dtype, device);
  };
  return grid;
}

}  // namespace

void register_mm_op_db() {
  OpEntry entry;
  entry.op_symbol = "mm";
  entry.dsls = {"cpp"};
  entry.devices = {c10::DeviceType::CUDA};
  entry.dtypes = {at::kBFloat16, at::kHalf, at::kFloat};
  entry.differentiable = true;
  // cuBLAS's aligned and element-at-a-time kernels sum the k products in different orders
  // and splits: where a result is small beside its partial sums (they reach 32-64 at the
  // samples' k), the two differ by up to an ulp of those sums (H200: 0.25 in bfloat16, 0.06
  // in float16, each as far from float64's result as aten's). The absolute tolerance is 2
  // such ulps in bfloat16 and 4 in float16; the float64 check holds the override to aten's
  // own error.
  entry.tolerances = {{at::kBFloat16, {1.6e-2, 0.5}}, {at::kHalf, {1e-3, 0.125}}};
  entry.inapplicable_classes = {{SampleClass::zero_dim, "mm takes 2-D tensors only: a 0-dim one is an error sample"}};
  entry.samples = mm_samples;
  entry.error_samples = mm_errors;
  entry.cost = mm_cost;
  entry.bench_cases = mm_bench_cases;
  entry.grid = mm_grid;
  register_op_entry(std::move(entry));
}

}  // namespace native_ops::kernels
