// The op database entry of bmm: what judges and measures its overrides.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>

#include "gpu_domain.h"
#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

using samples::Fill;
using samples::laid_out;
using samples::Layout;

constexpr const char* kOuterProduct = "bmm_cpp_0";
constexpr const char* kCudaOuterProduct = "bmm_cuda_0";
constexpr const char* kTritonOuterProduct = "bmm_triton_0";

struct BmmShape {
  int64_t batch, m, k, n;
};

std::string describe_pair(const at::Tensor& a, const at::Tensor& b) {
  return samples::describe(a) + " x " + samples::describe(b);
}

// The outer-product kernel's domain: its cond must accept exactly these.
bool outer_product_handles(const at::Tensor& a, const at::Tensor& b) {
  const auto dtype = a.scalar_type();
  return (dtype == at::kFloat || dtype == at::kDouble) && b.scalar_type() == dtype && a.size(2) == 1 && a.numel() > 0 &&
         b.numel() > 0 && (b.stride(2) == 1 || b.size(2) == 1) &&
         cpp_outer_product_slower_than_aten(a.size(0), a.size(1), b.size(2)) == nullptr;
}

// The cuda and triton outer-product kernels' domain (the samples stay far below their
// launch limits).
bool gpu_outer_product_handles(const at::Tensor& a, const at::Tensor& b) {
  const auto dtype = a.scalar_type();
  return (dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16) && b.scalar_type() == dtype &&
         a.size(2) == 1 && a.numel() > 0 && b.numel() > 0;
}

// The cuda and triton kernels', less where aten is at least as fast (speed.h).
bool cuda_outer_product_handles(const at::Tensor& a, const at::Tensor& b) {
  return gpu_outer_product_handles(a, b) &&
         cuda_outer_product_slower_than_aten(a.size(0), a.size(1), b.size(2), a.element_size()) == nullptr;
}
bool triton_outer_product_handles(const at::Tensor& a, const at::Tensor& b) {
  return gpu_outer_product_handles(a, b) &&
         triton_outer_product_slower_than_aten(a.size(0), a.size(1), b.size(2), a.element_size()) == nullptr;
}

// A node and the calls its cond must accept.
struct Domain {
  const char* node;
  bool (*handles)(const at::Tensor& a, const at::Tensor& b);
};

std::vector<Sample> bmm_samples(c10::Device device, c10::ScalarType dtype, const Domain& domain) {
  std::vector<Sample> all;
  uint64_t seed = 0;
  auto add = [&](SampleClass sample_class, BmmShape s, Fill fa, Fill fb) {
    fa.seed = ++seed;
    fb.seed = ++seed;
    const at::Tensor a = samples::make_tensor({s.batch, s.m, s.k}, dtype, device, fa);
    const at::Tensor b = samples::make_tensor({s.batch, s.k, s.n}, dtype, device, fb);
    std::vector<std::string> meant_for;
    if (domain.handles(a, b)) meant_for.push_back(domain.node);
    all.push_back({describe_pair(a, b), sample_class, {a, b}, meant_for});
  };
  const Fill extreme = samples::with_extremes(dtype);

  add(SampleClass::typical, {4, 16, 1, 32}, {}, {});
  add(SampleClass::typical, {4, 16, 8, 32}, {}, {});  // inner dimension 8: not an outer product
  add(SampleClass::empty, {0, 3, 1, 4}, {}, {});
  add(SampleClass::empty, {2, 0, 1, 5}, {}, {});
  add(SampleClass::one_element, {1, 1, 1, 1}, {}, {});
  // cuda: whole tiles (rows of 16, a warp's 16-byte vectors), then one row and one column past them
  add(SampleClass::typical, {3, 48, 1, 512}, {}, {});
  add(SampleClass::odd_sizes, {3, 49, 1, 512}, {}, {});
  add(SampleClass::odd_sizes, {3, 48, 1, 520}, {}, {});
  add(SampleClass::odd_sizes, {3, 17, 1, 13}, {}, {});
  add(SampleClass::odd_sizes, {5, 1, 1, 67}, {}, {});
  add(SampleClass::large, {1, 1 << 20, 1, 2}, {}, {});
  add(SampleClass::large, {4, 262147, 1, 3}, {}, {});
  add(SampleClass::large, {4, 4099, 1, 65}, {}, {});  // cpp: many rows, wide enough
  add(SampleClass::transposed, {4, 16, 1, 32}, laid_out(Layout::transposed), laid_out(Layout::transposed));
  add(SampleClass::transposed, {3, 9, 5, 7}, laid_out(Layout::transposed), laid_out(Layout::transposed));
  add(SampleClass::step_sliced, {3, 48, 1, 512}, laid_out(Layout::step_sliced), {});  // whole tiles, strided a
  add(SampleClass::expanded, {3, 48, 1, 512}, laid_out(Layout::expanded), laid_out(Layout::expanded));
  add(SampleClass::step_sliced, {4, 16, 1, 32}, laid_out(Layout::step_sliced), {});
  add(SampleClass::step_sliced, {4, 16, 1, 32}, {}, laid_out(Layout::step_sliced));  // mat2 rows not unit-stride
  add(SampleClass::expanded, {4, 16, 1, 32}, laid_out(Layout::expanded), laid_out(Layout::expanded));
  add(SampleClass::extreme_values, {4, 16, 1, 33}, extreme, extreme);
  // The bounds of the cuda cond
  add(SampleClass::odd_sizes, {16, 1, 1, 127}, {}, {});  // declined by cuda
  add(SampleClass::odd_sizes, {15, 1, 1, 127}, {}, {});
  add(SampleClass::typical, {16, 1, 1, 128}, {}, {});
  if (device.is_cuda()) {
    add(SampleClass::large, {16, 2048, 1, 127}, {}, {});  // declined by cuda
    add(SampleClass::large, {1, 127, 1, 8193}, {}, {});
    add(SampleClass::large, {1, 2047, 1, 8193}, {}, {});  // the last float32 one triton accepts
    add(SampleClass::large, {1, 2048, 1, 8193}, {}, {});
  }
  return all;
}

std::vector<ErrorSample> bmm_errors(c10::Device device) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(device);
  return {
      {"batch sizes differ: f32[2,3,1] x f32[3,1,4]",
       {at::ones({2, 3, 1}, f32), at::ones({3, 1, 4}, f32)},
       "Expected size for first two dimensions of batch2 tensor"},
      {"inner sizes differ: f32[2,3,2] x f32[2,1,4]",
       {at::ones({2, 3, 2}, f32), at::ones({2, 1, 4}, f32)},
       "Expected size for first two dimensions of batch2 tensor"},
      {"2-D batch1: f32[3,1] x f32[2,1,4]",
       {at::ones({3, 1}, f32), at::ones({2, 1, 4}, f32)},
       "batch1 must be a 3D tensor"},
      {"0-dim batch1: f32[] x f32[2,1,4]", {at::ones({}, f32), at::ones({2, 1, 4}, f32)}, "batch1 must be a 3D tensor"},
      {"dtypes differ: f32[2,3,1] x f64[2,1,4]",
       {at::ones({2, 3, 1}, f32), at::ones({2, 1, 4}, f64)},
       "expected scalar type Float but found Double"},
  };
}

Cost bmm_cost(const torch::jit::Stack& arguments) {
  const at::Tensor& a = arguments[0].toTensor();
  const at::Tensor& b = arguments[1].toTensor();
  const double batch = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  return {(batch * m * k + batch * k * n + batch * m * n) * a.element_size(), 2 * batch * m * n * k};
}

BenchCase bmm_bench_case(BmmShape s, c10::ScalarType dtype, c10::Device device, std::vector<std::string> correct) {
  const std::string shape = dtype_name(dtype) + " (" + std::to_string(s.batch) + "," + std::to_string(s.m) + "," +
                            std::to_string(s.k) + ")x(" + std::to_string(s.batch) + "," + std::to_string(s.k) + "," +
                            std::to_string(s.n) + ")";
  return {shape,
          [s, dtype, device] {
            Fill fa, fb;
            fb.seed = 1;
            return torch::jit::Stack{samples::make_tensor({s.batch, s.m, s.k}, dtype, device, fa),
                                     samples::make_tensor({s.batch, s.k, s.n}, dtype, device, fb)};
          },
          std::move(correct)};
}

std::vector<BenchCase> bmm_bench_cases(c10::Device device) {
  std::vector<BenchCase> cases;
  for (const BmmShape s : std::vector<BmmShape>{{1, 1, 1, 1},
                                                {8, 16, 1, 16},
                                                {64, 64, 1, 64},
                                                {1024, 64, 1, 64},
                                                {16, 256, 1, 512},
                                                {64, 1024, 1, 1024},
                                                {16, 1024, 1, 2048},
                                                {64, 64, 16, 64}}) {
    // Above 2^24 outputs the cond declines for speed only: the kernel is still right there.
    cases.push_back(bmm_bench_case(s, at::kFloat, device,
                                   s.k == 1 ? std::vector<std::string>{kOuterProduct} : std::vector<std::string>{}));
  }
  return cases;
}

// The shapes of ../shared/notes/h200-baseline.md, and small ones where launch cost rules.
std::vector<BenchCase> bmm_cuda_bench_cases(c10::Device device) {
  std::vector<BenchCase> cases;
  for (const c10::ScalarType dtype : {at::kBFloat16, at::kHalf, at::kFloat}) {
    for (const BmmShape s : std::vector<BmmShape>{{1, 1, 1, 1},
                                                  {8, 16, 1, 16},
                                                  {1024, 64, 1, 64},
                                                  {256, 128, 1, 512},
                                                  {64, 1024, 1, 1024},
                                                  {8, 4096, 1, 4096}}) {
      cases.push_back(bmm_bench_case(s, dtype, device, {}));
    }
  }
  return cases;
}

// batch x m x n with an inner dimension of 1 (what the overrides take): one to many
// batches, decode-sized to large and odd outputs, up to 4 GiB a cell (256 MiB on the CPU).
ShapeGrid bmm_grid(c10::Device device) {
  ShapeGrid grid;
  if (device.is_cpu()) {
    grid.axes = {{"batch", {1, 16, 256}}, {"m", {1, 127, 1024}}, {"n", {2, 16, 127, 1024}}};
    grid.max_bytes = 256.0 * (1 << 20);
  } else {
    grid.axes = {{"batch", {1, 16, 64, 512}}, {"m", {1, 64, 127, 2048, 4096}}, {"n", {64, 127, 3000, 4096, 8193}}};
  }
  grid.make_arguments = [](const std::vector<int64_t>& point, c10::ScalarType dtype, c10::Device device) {
    const auto options = at::TensorOptions().dtype(dtype).device(device);
    return torch::jit::Stack{at::empty({point[0], point[1], 1}, options).uniform_(-1, 1),
                             at::empty({point[0], 1, point[2]}, options).uniform_(-1, 1)};
  };
  return grid;
}

}  // namespace

void register_bmm_op_db() {
  OpEntry entry;
  entry.op_symbol = "bmm";
  entry.dsls = {"cpp"};
  entry.devices = {c10::DeviceType::CPU};
  entry.dtypes = {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16};
  entry.differentiable = true;
  entry.inapplicable_classes = {{SampleClass::zero_dim, "bmm takes 3-D tensors only: a 0-dim one is an error sample"}};
  entry.samples = [](c10::Device device, c10::ScalarType dtype) {
    return bmm_samples(device, dtype, {kOuterProduct, &outer_product_handles});
  };
  entry.error_samples = bmm_errors;
  entry.cost = bmm_cost;
  entry.bench_cases = bmm_bench_cases;
  entry.grid = bmm_grid;
  register_op_entry(entry);

  entry.dsls = {"cuda"};
  entry.devices = {c10::DeviceType::CUDA};
  entry.dtypes = {at::kBFloat16, at::kHalf, at::kFloat};
  entry.samples = [](c10::Device device, c10::ScalarType dtype) {
    return bmm_samples(device, dtype, {kCudaOuterProduct, &cuda_outer_product_handles});
  };
  entry.bench_cases = bmm_cuda_bench_cases;
  register_op_entry(entry);

  entry.dsls = {"triton"};
  entry.samples = [](c10::Device device, c10::ScalarType dtype) {
    return bmm_samples(device, dtype, {kTritonOuterProduct, &triton_outer_product_handles});
  };
  register_op_entry(std::move(entry));
}

}  // namespace native_ops::kernels
