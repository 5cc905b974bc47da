// The op database entry of embedding_dense_backward: what judges and measures its cuda
// override.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randint.h>

#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

using samples::Fill;
using samples::laid_out;
using samples::Layout;

// The cuda kernel's domain: a contiguous gradient of rows of a multiple of 16 bytes (the
// samples' tensors are fresh, aligned), int64 or int32 indices, at least one weight row;
// but where aten is faster (speed.h).
bool cuda_handles(const at::Tensor& grad, const at::Tensor& indices, int64_t num_weights) {
  return grad.is_contiguous() && grad.size(-1) > 0 && grad.size(-1) * grad.element_size() % 16 == 0 &&
         num_weights > 0 &&
         cuda_embedding_backward_slower_than_aten(indices.numel(), num_weights, grad.size(-1), grad.element_size()) ==
             nullptr;
}

struct Call {
  std::vector<int64_t> index_sizes;
  int64_t num_weights = 1000;
  int64_t width = 128;
  int64_t padding_idx = -1;
  bool scale_grad_by_freq = false;
  c10::ScalarType index_dtype = at::kLong;
  Fill grad_fill{};
  int64_t highest_index = -1;  // indices uniform in [0, highest_index]; -1: [0, num_weights)
};

std::vector<Sample> embedding_backward_samples(c10::Device device, c10::ScalarType dtype) {
  std::vector<Sample> all;
  uint64_t seed = 900;
  auto add = [&](SampleClass sample_class, Call call) {
    Fill index_fill;
    index_fill.seed = ++seed;
    index_fill.low = 0;
    index_fill.high = static_cast<double>(call.highest_index >= 0 ? call.highest_index + 1 : call.num_weights);
    const at::Tensor indices = samples::make_tensor(call.index_sizes, call.index_dtype, device, index_fill);
    std::vector<int64_t> grad_sizes = call.index_sizes;
    grad_sizes.push_back(call.width);
    call.grad_fill.seed = ++seed;
    call.grad_fill.low = -1;  // the extreme values' sample adds its extremes to these
    call.grad_fill.high = 1;
    const at::Tensor grad = samples::make_tensor(grad_sizes, dtype, device, call.grad_fill);
    std::vector<std::string> meant_for;
    if (cuda_handles(grad, indices, call.num_weights)) meant_for.push_back("embedding_dense_backward_cuda_0");
    std::string description = "grad " + samples::describe(grad) + ", indices " + samples::describe(indices) +
                              c10::str(", num_weights ", call.num_weights, ", padding_idx ", call.padding_idx);
    if (call.scale_grad_by_freq) description += ", scaled by frequency";
    all.push_back({description,
                   sample_class,
                   {grad, indices, call.num_weights, call.padding_idx, call.scale_grad_by_freq},
                   meant_for});
  };
  // Fewer than 362 indices go to aten but for 16-bit rows into a vocabulary (speed.h):
  // the cuda kernel's samples have more.
  add(SampleClass::typical, {{64}});
  add(SampleClass::typical, {{4, 16}, 100, 64});   // many indices repeat
  add(SampleClass::typical, {{512}, 50, 128, 3});  // padding_idx among the indices
  add(SampleClass::typical, {{512}, 50, 128, -1, true});
  add(SampleClass::typical, {{512}, 50, 128, 7, true, at::kInt});
  add(SampleClass::typical, {{16, 32}, 1000, 768, -1, false, at::kInt});
  add(SampleClass::typical, {{1}, 32000, 4096});                               // a decode step's one token
  add(SampleClass::typical, {{8}, 50257, 2048});                               // 16-bit: the cuda kernel's
  add(SampleClass::typical, {{400}, 1000, 128, -1, false, at::kLong, {}, 9});  // most rows zero
  add(SampleClass::empty, {{0}, 10, 64});
  add(SampleClass::zero_dim, {{}, 10, 64});
  add(SampleClass::one_element, {{5}, 1, 8});
  add(SampleClass::odd_sizes, {{1031}, 977, 24});
  add(SampleClass::odd_sizes, {{33}, 17, 13});  // rows not a multiple of 16 bytes: aten
  add(SampleClass::large, {{16384}, 32000, 1024});
  add(SampleClass::large, {{4096}, 3, 256});  // three segments of about 1365 rows each
  add(SampleClass::large, {{3, 2047}, 50257, 2048});
  add(SampleClass::transposed, {{64, 16}, 1000, 128, -1, false, at::kLong, laid_out(Layout::transposed)});
  add(SampleClass::step_sliced, {{64}, 1000, 128, -1, false, at::kLong, laid_out(Layout::step_sliced)});
  add(SampleClass::expanded, {{64}, 1000, 128, -1, false, at::kLong, laid_out(Layout::expanded)});
  add(SampleClass::extreme_values, {{512}, 100, 64, -1, false, at::kLong, samples::with_extremes(dtype)});
  return all;
}

// aten's checks (seen on the H200); the cond declines each call, so aten raises them.
std::vector<ErrorSample> embedding_backward_errors(c10::Device device) {
  const auto options = at::TensorOptions().device(device);
  return {
      {"float32 indices",
       {at::ones({4, 8}, options), at::ones({4}, options), int64_t{10}, int64_t{-1}, false},
       "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int"},
  };
}

// The gradient and the indices read, the weight's gradient written once.
Cost embedding_backward_cost(const torch::jit::Stack& arguments) {
  const at::Tensor& grad = arguments[0].toTensor();
  const at::Tensor& indices = arguments[1].toTensor();
  const double written = static_cast<double>(arguments[2].toInt()) * (grad.dim() > 0 ? grad.size(-1) : 1);
  return {static_cast<double>(grad.nbytes() + indices.nbytes()) + written * grad.element_size(),
          static_cast<double>(grad.numel())};
}

torch::jit::Stack embedding_backward_arguments(int64_t count, int64_t num_weights, int64_t width, c10::ScalarType dtype,
                                               c10::Device device) {
  const at::Tensor indices = at::randint(num_weights, {count}, at::TensorOptions().dtype(at::kLong).device(device));
  const at::Tensor grad = at::empty({count, width}, at::TensorOptions().dtype(dtype).device(device)).uniform_(-1, 1);
  return {grad, indices, num_weights, int64_t{-1}, false};
}

// A training step's token embeddings: batch x sequence tokens into real vocabularies.
std::vector<BenchCase> embedding_backward_bench_cases(c10::Device device) {
  std::vector<BenchCase> cases;
  for (const c10::ScalarType dtype : {at::kBFloat16, at::kFloat}) {
    for (const auto& [count, num_weights, width] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{16384, 128256, 4096},
                                                            {4096, 50257, 2048},
                                                            {8192, 32000, 4096},
                                                            {65536, 151936, 1024},
                                                            {64, 32000, 768}}) {
      cases.push_back({dtype_name(dtype) + c10::str(" ", count, " into [", num_weights, ",", width, "]"),
                       [=] { return embedding_backward_arguments(count, num_weights, width, dtype, device); },
                       {}});
    }
  }
  return cases;
}

ShapeGrid embedding_backward_grid(c10::Device) {
  ShapeGrid grid;
  grid.axes = {{"indices", {1, 64, 2048, 16384, 65536}},
               {"num_weights", {1000, 32000, 50257, 128256, 151936}},
               {"width", {64, 768, 2048, 4096}}};
  grid.make_arguments = [](const std::vector<int64_t>& point, c10::ScalarType dtype, c10::Device device) {
    return embedding_backward_arguments(point[0], point[1], point[2], dtype, device);
  };
  grid.impl_correct_for = [](const std::vector<int64_t>& point, c10::ScalarType dtype) {
    return point[2] * static_cast<int64_t>(c10::elementSize(dtype)) % 16 == 0
               ? std::vector<std::string>{"embedding_dense_backward_cuda_0"}
               : std::vector<std::string>{};
  };
  return grid;
}

}  // namespace

void register_embedding_backward_op_db() {
  OpEntry entry;
  entry.op_symbol = "embedding_dense_backward";
  entry.dsls = {"cuda"};
  entry.devices = {c10::DeviceType::CUDA};
  entry.dtypes = {at::kBFloat16, at::kHalf, at::kFloat};
  entry.differentiable = false;  // a gradient itself; its double backward is not judged
  // aten's CUDA kernel for up to 3072 indices adds each chunk of 32 indices' float sum into
  // the 16-bit weight gradient, rounding the running sum (a few units for gradients in
  // [-1, 1]) once a chunk; the override rounds once. They differ by up to a few ulps of 1
  // (seen: 4, in both 16-bit types), so the absolute tolerance is 8 ulps of 1; the float64
  // check still holds the override to aten's own error. In float32 aten sums a segment's
  // rows in plain float partial sums, which drift from the exact sum by more than the default
  // 1e-5 over long segments (seen: 3.1e-5 at 1365 rows of [-1, 1], where the override's sum
  // is compensated; aten's own result there varies from run to run by up to 7.6e-5 on the
  // H200, 3.8e-5 from float64's), so the absolute tolerance is 1e-4 there.
  entry.tolerances = {
      {at::kBFloat16, {1.6e-2, 8 * 0x1p-7}}, {at::kHalf, {1e-3, 8 * 0x1p-10}}, {at::kFloat, {1.3e-6, 1e-4}}};
  entry.samples = embedding_backward_samples;
  entry.error_samples = embedding_backward_errors;
  entry.cost = embedding_backward_cost;
  entry.bench_cases = embedding_backward_bench_cases;
  entry.grid = embedding_backward_grid;
  register_op_entry(std::move(entry));
}

}  // namespace native_ops::kernels
