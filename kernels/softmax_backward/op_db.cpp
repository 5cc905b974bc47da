// The op database entries of _softmax_backward_data and _log_softmax_backward_data: what
// judges and measures their cuda overrides.
#include <limits>

#include <ATen/core/Tensor.h>
#include <ATen/ops/_log_softmax.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>

#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

using samples::Fill;
using samples::laid_out;
using samples::Layout;

// The forward's output of x over dim: what the backward receives as `output`.
at::Tensor forward_output(const at::Tensor& x, int64_t dim, bool log) {
  return log ? at::_log_softmax(x, dim, false) : at::_softmax(x, dim, false);
}

// The cuda kernels' domain (both ops): grad_output and output alike, contiguous, over the
// last dimension, not empty, the gradient in their dtype; less where aten is faster
// (speed.h).
bool cuda_backward_handles(const at::Tensor& grad_out, const at::Tensor& out, int64_t dim,
                           c10::ScalarType input_dtype) {
  const auto dtype = out.scalar_type();
  return (dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16) && grad_out.scalar_type() == dtype &&
         input_dtype == dtype && out.dim() > 0 && (dim == -1 || dim == out.dim() - 1) && out.numel() > 0 &&
         out.is_contiguous() && grad_out.is_contiguous() &&
         cuda_softmax_backward_slower_than_aten(out.numel() / out.size(-1), out.size(-1), out.element_size()) ==
             nullptr;
}

std::vector<Sample> backward_samples(c10::Device device, c10::ScalarType dtype, bool log) {
  const char* node = log ? "_log_softmax_backward_data_cuda_0" : "_softmax_backward_data_cuda_0";
  std::vector<Sample> all;
  uint64_t seed = 500;
  auto add_call = [&](SampleClass sample_class, const at::Tensor& grad_out, const at::Tensor& out, int64_t dim,
                      c10::ScalarType input_dtype, const std::string& note) {
    std::vector<std::string> meant_for;
    if (cuda_backward_handles(grad_out, out, dim, input_dtype)) meant_for.push_back(node);
    all.push_back({"grad " + samples::describe(grad_out) + ", output " + samples::describe(out) + ", dim " +
                       std::to_string(dim) + note,
                   sample_class,
                   {grad_out, out, dim, input_dtype},
                   meant_for});
  };
  // x (the forward's input) filled by `fill`, grad_output by `grad_fill`; `layout` lays
  // output out (grad_fill lays out grad_output).
  auto add = [&](SampleClass sample_class, std::vector<int64_t> sizes, int64_t dim, Fill fill = {}, Fill grad_fill = {},
                 Layout layout = Layout::contiguous) {
    fill.seed = ++seed;
    grad_fill.seed = ++seed;
    if (grad_fill.extreme_magnitude == 0) {
      grad_fill.low = -1;
      grad_fill.high = 1;
    }
    const at::Tensor x = samples::make_tensor(sizes, dtype, device, fill);
    at::Tensor out = forward_output(x, dim, log);
    if (layout == Layout::transposed) out = out.mT().contiguous().mT();
    add_call(sample_class, samples::make_tensor(sizes, dtype, device, grad_fill), out, dim, dtype, "");
  };
  Fill logits;  // as a vocabulary head's: a spread of a few units
  logits.low = -4;
  logits.high = 4;
  const Fill extreme = samples::with_extremes(dtype);

  add(SampleClass::typical, {64, 1024}, -1, logits);
  add(SampleClass::typical, {8, 128}, -1, logits);
  add(SampleClass::typical, {64, 1024}, 0, logits);  // not the last dimension
  add(SampleClass::typical, {4, 16, 1024}, 2, logits);
  add(SampleClass::typical, {1, 4096}, -1, logits);  // decode rows
  add(SampleClass::typical, {32, 5120}, -1, logits);
  add(SampleClass::typical, {8, 8192}, -1, logits);
  add(SampleClass::empty, {0, 16}, -1);
  add(SampleClass::zero_dim, {}, 0);
  add(SampleClass::one_element, {1, 1}, -1);
  add(SampleClass::one_element, {65536, 1}, -1);  // rows of one element
  add(SampleClass::odd_sizes, {5, 13109}, -1, logits);
  add(SampleClass::odd_sizes, {4099, 17}, -1, logits);
  add(SampleClass::odd_sizes, {3, 50257}, -1, logits);   // rows off vector boundaries over a cluster
  add(SampleClass::odd_sizes, {2, 100003}, -1, logits);  // the same, partly in shared memory
  add(SampleClass::odd_sizes, {2, 151937}, -1, logits);
  {
    // Views one element into their storage: rows unequally far from vector boundaries in
    // grad_output and output (an element a thread).
    Fill fill = logits;
    fill.seed = ++seed;
    const at::Tensor storage = samples::make_tensor({2, 3 * 1031 + 1}, dtype, device, fill);
    const at::Tensor out = forward_output(storage[0].narrow(0, 1, 3 * 1031).view({3, 1031}), -1, log);
    const at::Tensor out_storage = at::empty({3 * 1031 + 1}, out.options());
    const at::Tensor shifted_out = out_storage.narrow(0, 1, 3 * 1031).view({3, 1031}).copy_(out);
    add_call(SampleClass::odd_sizes, storage[1].narrow(0, 1, 3 * 1031).view({3, 1031}), shifted_out, -1, dtype,
             ", output one element into its storage");
  }
  add(SampleClass::large, {1024, 1024}, -1, logits);
  add(SampleClass::large, {300, 16400}, -1, logits);
  add(SampleClass::large, {4, 40000}, -1, logits);    // rows over a cluster, slices not full
  add(SampleClass::large, {2, 65536}, -1, logits);    // a cluster's slices full
  add(SampleClass::large, {2, 100000}, -1, logits);   // float32: partly in shared memory
  add(SampleClass::large, {3, 151936}, -1, logits);   // 16-bit: over 1024-thread cluster blocks, slices not full
  add(SampleClass::large, {2, 262144}, -1, logits);   // 16-bit: the widest a cluster holds; float32: in memory
  add(SampleClass::large, {2, 1 << 19}, -1, logits);  // left in memory, read twice
  add(SampleClass::transposed, {256, 512}, -1, logits, laid_out(Layout::transposed), Layout::transposed);
  add(SampleClass::step_sliced, {128, 1024}, -1, logits, laid_out(Layout::step_sliced));
  // grad_output of y.sum(): one row broadcast over all (stride 0)
  add(SampleClass::expanded, {128, 1024}, -1, logits, laid_out(Layout::expanded));
  add(SampleClass::extreme_values, {64, 1024}, -1, extreme);  // output NaN and 0 (-inf for log) where x is
  add(SampleClass::extreme_values, {64, 1031}, -1, logits, extreme);
  {
    // Masked columns (-inf logits, as attention and padding masks write them): output 0
    // (log: -inf) there.
    Fill fill = logits;
    fill.seed = ++seed;
    at::Tensor x = samples::make_tensor({8, 40000}, dtype, device, fill);
    const at::Tensor columns = at::arange(40000, at::TensorOptions().dtype(at::kLong).device(device));
    x.masked_fill_(columns.ge(30000), -std::numeric_limits<double>::infinity());
    Fill grad_fill;
    grad_fill.seed = ++seed;
    grad_fill.low = -1;
    grad_fill.high = 1;
    add_call(SampleClass::extreme_values, samples::make_tensor({8, 40000}, dtype, device, grad_fill),
             forward_output(x, -1, log), -1, dtype, ", masked columns");
  }
  add(SampleClass::odd_sizes, {1024, 1031}, -1, logits);  // 16-bit: declined
  add(SampleClass::odd_sizes, {1023, 1031}, -1, logits);
  add(SampleClass::odd_sizes, {1024, 8201}, -1, logits);  // held shifted: accepted
  add(SampleClass::odd_sizes, {2048, 1031}, -1, logits);  // the same
  if (dtype != at::kFloat) {
    // A half_to_float forward: float32 output and gradient, the input's dtype 16-bit.
    Fill fill = logits;
    fill.seed = ++seed;
    const at::Tensor x = samples::make_tensor({16, 1024}, at::kFloat, device, fill);
    add_call(SampleClass::typical, samples::make_tensor({16, 1024}, at::kFloat, device, fill),
             forward_output(x, -1, log), -1, dtype, ", input_dtype " + dtype_name(dtype));
  }
  return all;
}

// aten's checks; the cond declines each call, so aten raises them. (aten's CUDA
// log-softmax backward checks no shapes: a grad_output of another shape is declined, and
// aten runs it as it does without the library.)
std::vector<ErrorSample> backward_errors(c10::Device device, bool log) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  std::vector<ErrorSample> errors = {
      {"dim out of range: f32[4,5], dim 2",
       {at::ones({4, 5}, f32), at::ones({4, 5}, f32), int64_t{2}, at::kFloat},
       "Dimension out of range"},
  };
  if (!log) {
    errors.push_back({"grad_output f32[4,6] for output f32[4,5]",
                      {at::ones({4, 6}, f32), at::ones({4, 5}, f32), int64_t{1}, at::kFloat},
                      "to have same size as tensor for argument #2 'output'"});
  }
  return errors;
}

Cost backward_cost(const torch::jit::Stack& arguments) {
  const at::Tensor& out = arguments[1].toTensor();
  const double n = out.numel();
  return {3 * n * out.element_size(), 4 * n};  // grad_output and output read, grad_input written
}

torch::jit::Stack backward_arguments(int64_t rows, int64_t width, c10::ScalarType dtype, c10::Device device, bool log) {
  const auto options = at::TensorOptions().dtype(dtype).device(device);
  const at::Tensor x = at::empty({rows, width}, options).uniform_(-4, 4);
  const at::Tensor grad_out = at::empty({rows, width}, options).uniform_(-1, 1);
  return {grad_out, forward_output(x, -1, log), int64_t{-1}, dtype};
}

// The shapes of the training steps the issue measured: attention rows and vocabulary heads.
std::vector<BenchCase> backward_bench_cases(c10::Device device, bool log) {
  std::vector<BenchCase> cases;
  for (const c10::ScalarType dtype : {at::kBFloat16, at::kHalf, at::kFloat}) {
    for (const auto& [rows, width] : std::vector<std::pair<int64_t, int64_t>>{
             {64, 1024}, {32768, 4096}, {4096, 32000}, {8192, 50257}, {1024, 65536}}) {
      cases.push_back({dtype_name(dtype) + " [" + std::to_string(rows) + "," + std::to_string(width) + "]",
                       [=] { return backward_arguments(rows, width, dtype, device, log); },
                       {}});
    }
  }
  return cases;
}

}  // namespace

void register_softmax_backward_op_db() {
  for (const bool log : {false, true}) {
    OpEntry entry;
    entry.op_symbol = log ? "_log_softmax_backward_data" : "_softmax_backward_data";
    entry.dsls = {"cuda"};
    entry.devices = {c10::DeviceType::CUDA};
    entry.dtypes = {at::kBFloat16, at::kHalf, at::kFloat};
    entry.differentiable = false;  // a gradient itself; its double backward is not judged
    entry.samples = [log](c10::Device device, c10::ScalarType dtype) { return backward_samples(device, dtype, log); };
    entry.error_samples = [log](c10::Device device) { return backward_errors(device, log); };
    entry.cost = backward_cost;
    entry.bench_cases = [log](c10::Device device) { return backward_bench_cases(device, log); };
    entry.grid = [log](c10::Device device) {
      return row_op_grid(device, [log](int64_t rows, int64_t width, c10::ScalarType dtype, c10::Device device) {
        return backward_arguments(rows, width, dtype, device, log);
      });
    };
    register_op_entry(std::move(entry));
  }
}

}  // namespace native_ops::kernels
