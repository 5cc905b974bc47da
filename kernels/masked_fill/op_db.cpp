// The op database entries of masked_fill.Scalar and masked_fill_.Scalar (cuda at CUDA):
// what judges and measures their overrides.
#include <limits>
#include <optional>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>

#include "mask_broadcast.h"
#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

using samples::Fill;
using samples::laid_out;
using samples::Layout;

// One of the two ops: masked_fill.Scalar, or masked_fill_.Scalar (in place).
struct Op {
  const char* symbol;
  const char* node;
  bool in_place;
};
constexpr double kMinusInf = -std::numeric_limits<double>::infinity();  // attention masks fill with it

// The cuda kernel's domain: a contiguous non-empty input, a contiguous bool mask on its
// device that broadcasts over one run of its dimensions (the samples' values all convert);
// but where aten is as fast (speed.h).
bool cuda_handles(const at::Tensor& self, const at::Tensor& mask, bool in_place) {
  if (self.numel() == 0 || !self.is_contiguous() || !mask.is_contiguous() || mask.scalar_type() != at::kBool) {
    return false;
  }
  const std::optional<MaskBroadcast> shape = mask_broadcast(self.sizes(), mask.sizes());
  return shape.has_value() && cuda_masked_fill_slower_than_aten(*shape, self.element_size(), in_place) == nullptr;
}

std::vector<Sample> masked_fill_samples(c10::Device device, c10::ScalarType dtype, const Op& op) {
  std::vector<Sample> all;
  uint64_t seed = 1200;
  auto add_tensors = [&](SampleClass sample_class, const at::Tensor& self, const at::Tensor& mask,
                         const c10::Scalar& value, const std::string& note) {
    std::vector<std::string> meant_for;
    if (cuda_handles(self, mask, op.in_place)) meant_for.push_back(op.node);
    all.push_back({samples::describe(self) + ", mask " + samples::describe(mask) + ", value " +
                       c10::str(value.isFloatingPoint() ? value.toDouble() : value.toLong()) + note,
                   sample_class,
                   {self, mask, value},
                   meant_for});
  };
  auto make = [&](std::vector<int64_t> sizes, c10::ScalarType type, Fill fill = {}) {
    fill.seed = ++seed;
    return samples::make_tensor(sizes, type, device, fill);
  };
  auto add = [&](SampleClass sample_class, std::vector<int64_t> sizes, std::vector<int64_t> mask_sizes,
                 c10::Scalar value = kMinusInf, Fill self_fill = {}, Fill mask_fill = {}) {
    add_tensors(sample_class, make(sizes, dtype, self_fill), make(mask_sizes, at::kBool, mask_fill), value, "");
  };

  add(SampleClass::typical, {4, 8, 64, 64}, {64, 64});         // attention scores, a mask repeated over batch and heads
  add(SampleClass::typical, {2, 3, 5, 8}, {2, 3, 5, 8}, 0.5);  // the whole shape
  add(SampleClass::typical, {16, 1024}, {1, 1024}, 0.0);       // leading ones
  add(SampleClass::typical, {64, 1, 4096}, {4096});            // decode rows against a key mask
  add(SampleClass::typical, {8, 256}, {256}, int64_t{3});      // an integer value
  add(SampleClass::typical, {4, 8, 64, 64}, {4, 1, 64, 64});   // a padding mask, over heads
  add(SampleClass::typical, {4, 8, 64, 64}, {4, 1, 1, 64});    // over heads and query rows
  add(SampleClass::typical, {4, 8, 64, 64}, {4, 8, 64, 1});    // a mask a row: rows of one element
  if (!op.in_place) add(SampleClass::typical, {64, 64}, {64, 1, 1});  // more dimensions than the input: aten
  add(SampleClass::typical, {4, 8, 64, 16}, {4, 1, 64, 1});           // broadcasts over two runs: aten
  add_tensors(SampleClass::typical, make({16, 32}, dtype), make({32}, at::kBool).fill_(true), kMinusInf, ", all set");
  add(SampleClass::empty, {0, 16}, {16});
  add(SampleClass::zero_dim, {}, {});
  add(SampleClass::one_element, {1}, {1});
  add(SampleClass::one_element, {65536, 1}, {1});  // a mask of one element, repeated
  add(SampleClass::odd_sizes, {3, 5, 1031}, {1031});
  add(SampleClass::odd_sizes, {7, 13, 13}, {13, 13});
  add(SampleClass::odd_sizes, {4, 2, 50257}, {50257});
  {
    // A contiguous view one element into its storage: every vector starts off a boundary.
    const at::Tensor storage = make({6 * 1024 + 1}, dtype);
    add_tensors(SampleClass::odd_sizes, storage.narrow(0, 1, 6 * 1024).view({6, 1024}), make({1024}, at::kBool),
                kMinusInf, ", one element into its storage");
  }
  add(SampleClass::large, {2, 16, 1024, 1024}, {1024, 1024});
  add(SampleClass::large, {1024, 1, 4097}, {4097});
  add(SampleClass::transposed, {128, 256}, {128, 256}, kMinusInf, laid_out(Layout::transposed));  // aten
  add(SampleClass::transposed, {128, 256}, {128, 256}, kMinusInf, {}, laid_out(Layout::transposed));
  add(SampleClass::step_sliced, {128, 256}, {256}, kMinusInf, laid_out(Layout::step_sliced));
  add(SampleClass::step_sliced, {128, 256}, {256}, kMinusInf, {}, laid_out(Layout::step_sliced));
  // In place, the expanded rows share memory: a mask alike in each row leaves one result.
  add(SampleClass::expanded, {128, 256}, op.in_place ? std::vector<int64_t>{256} : std::vector<int64_t>{128, 256},
      kMinusInf, laid_out(Layout::expanded));
  add(SampleClass::expanded, {128, 256}, {128, 256}, kMinusInf, {}, laid_out(Layout::expanded));
  add(SampleClass::extreme_values, {64, 1031}, {1031}, 0.0, samples::with_extremes(dtype));  // NaN and inf kept
  add(SampleClass::extreme_values, {64, 1024}, {1024}, std::numeric_limits<double>::quiet_NaN());
  add(SampleClass::extreme_values, {64, 1024}, {1024}, samples::large_magnitude(dtype));
  return all;
}

// aten's checks; the cond declines each call, so aten raises them. In place, aten's CUDA
// kernel checks the broadcast with its own words: left out.
std::vector<ErrorSample> masked_fill_errors(c10::Device device, const Op& op) {
  const auto options = at::TensorOptions().device(device);
  const auto mask = options.dtype(at::kBool);
  std::vector<ErrorSample> errors = {
      {"a value float16 cannot hold: f16[4,5], 1e5",
       {at::ones({4, 5}, options.dtype(at::kHalf)), at::ones({5}, mask), 1e5},
       "value cannot be converted to type c10::Half without overflow"},
      {"a uint8 mask: f32[4,5], mask u8[5]",
       {at::ones({4, 5}, options), at::ones({5}, options.dtype(at::kByte)), 0.0},
       "only supports boolean masks"},
  };
  if (!op.in_place) {
    errors.push_back({"a mask that does not broadcast: f32[4,5], mask bool[4,4]",
                      {at::ones({4, 5}, options), at::ones({4, 4}, mask), 0.0},
                      "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1"});
  }
  return errors;
}

// The input read, the mask read once, the output (or the input, in place) written.
Cost masked_fill_cost(const torch::jit::Stack& arguments) {
  const at::Tensor& self = arguments[0].toTensor();
  const at::Tensor& mask = arguments[1].toTensor();
  return {static_cast<double>(2 * self.nbytes() + mask.nbytes()), static_cast<double>(self.numel())};
}

torch::jit::Stack masked_fill_arguments(std::vector<int64_t> sizes, std::vector<int64_t> mask_sizes,
                                        c10::ScalarType dtype, c10::Device device) {
  const at::Tensor self = at::empty(sizes, at::TensorOptions().dtype(dtype).device(device)).uniform_(-4, 4);
  const at::Tensor mask =
      at::empty(mask_sizes, at::TensorOptions().dtype(at::kFloat).device(device)).uniform_(0, 1).lt(0.5);
  return {self, mask, kMinusInf};
}

// Attention scores under a causal mask (the end-to-end model's, and a longer context's),
// decode rows of many heads against one key mask, an encoder's scores under a padding mask,
// and logits under a vocabulary mask.
std::vector<BenchCase> masked_fill_bench_cases(c10::Device device) {
  std::vector<BenchCase> cases;
  for (const c10::ScalarType dtype : {at::kBFloat16, at::kFloat}) {
    for (const auto& [sizes, mask_sizes] :
         std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{{{4, 16, 1024, 1024}, {1024, 1024}},
                                                                            {{1, 32, 2048, 2048}, {2048, 2048}},
                                                                            {{64, 32, 1, 4096}, {4096}},
                                                                            {{8, 32, 512, 512}, {8, 1, 1, 512}},
                                                                            {{64, 128256}, {128256}},
                                                                            {{2048, 50257}, {2048, 50257}}}) {
      cases.push_back({dtype_name(dtype) + " " + c10::str(c10::IntArrayRef(sizes)) + " mask " +
                           c10::str(c10::IntArrayRef(mask_sizes)),
                       [=] { return masked_fill_arguments(sizes, mask_sizes, dtype, device); },
                       {}});
    }
  }
  return cases;
}

// Mask rows of 16 (rows of a few keys) to 103M elements (square attention windows of 64 to
// 2048, decode rows of keys, odd and vocabulary widths, whole masks of logits as
// [2048,50257]), each repeated over one to 4096 input rows (batch and heads). 16-bit rows
// of 1024 and narrower take the flat path (cuda_kernels.cu), float32 rows of 1024 the rows
// path.
ShapeGrid masked_fill_grid(c10::Device, const Op& op) {
  ShapeGrid grid;
  grid.axes = {{"repeats", {1, 8, 64, 256, 1024, 4096}},
               {"mask_width", {16, 127, 1024, 4096, 50257, 262144, 1048576, 4194304, 16777216, 67108864, 102926336}}};
  grid.make_arguments = [](const std::vector<int64_t>& point, c10::ScalarType dtype, c10::Device device) {
    return masked_fill_arguments({point[0], point[1]}, {point[1]}, dtype, device);
  };
  grid.impl_correct_for = [node = std::string(op.node)](const std::vector<int64_t>&, c10::ScalarType) {
    return std::vector<std::string>{node};
  };
  return grid;
}

}  // namespace

void register_masked_fill_op_db() {
  for (const Op op : {Op{"masked_fill.Scalar", "masked_fill_Scalar_cuda_0", false},
                      Op{"masked_fill_.Scalar", "masked_fill__Scalar_cuda_0", true}}) {
    OpEntry entry;
    entry.op_symbol = op.symbol;
    entry.dsls = {"cuda"};
    entry.devices = {c10::DeviceType::CUDA};
    entry.dtypes = {at::kBFloat16, at::kHalf, at::kFloat};
    entry.differentiable = true;
    entry.samples = [op](c10::Device device, c10::ScalarType dtype) { return masked_fill_samples(device, dtype, op); };
    entry.error_samples = [op](c10::Device device) { return masked_fill_errors(device, op); };
    entry.cost = masked_fill_cost;
    entry.bench_cases = masked_fill_bench_cases;
    entry.grid = [op](c10::Device device) { return masked_fill_grid(device, op); };
    register_op_entry(std::move(entry));
  }
}

}  // namespace native_ops::kernels
