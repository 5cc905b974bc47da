// The op database entries of native_layer_norm, _fused_rms_norm and their backward ops:
// what judges and measures their cuda (and triton) overrides.
#include <array>
#include <functional>

#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/rsqrt.h>

#include "cuda_abi.h"
#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

using samples::Fill;
using samples::laid_out;
using samples::Layout;

// Which norm: the two differ in their arguments and in whether rows are centred.
struct Norm {
  const char* node;
  bool layer;  // native_layer_norm (input, shape, weight, bias, eps); else _fused_rms_norm (input, shape, weight, eps)
  bool triton = false;
};
constexpr Norm kLayerNorm{"native_layer_norm_cuda_0", true};
constexpr Norm kRmsNorm{"_fused_rms_norm_cuda_0", false};
constexpr Norm kTritonRmsNorm{"_fused_rms_norm_triton_0", false, true};

// The cuda norm kernels' domain: their conds must accept exactly these (samples make the
// weight and bias like the input, contiguous).
bool cuda_norm_handles(const at::Tensor& input) {
  const auto dtype = input.scalar_type();
  return (dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16) && input.numel() > 0 &&
         input.is_contiguous();
}

// The cuda RMS norm's, less the rows where aten was faster on the H200 (speed.h).
bool cuda_rms_norm_handles(const at::Tensor& input, int64_t width) {
  return cuda_norm_handles(input) &&
         cuda_rms_norm_slower_than_aten(input.numel() / width, width, input.element_size()) == nullptr;
}

// The triton kernel's: rows of a multiple of 16 elements, 16-byte aligned (the samples'
// weights are fresh, aligned tensors).
bool triton_norm_handles(const at::Tensor& input, int64_t width) {
  return cuda_norm_handles(input) && width % 16 == 0 && reinterpret_cast<uintptr_t>(input.const_data_ptr()) % 16 == 0;
}

// How a sample calls the norm.
struct Call {
  std::vector<int64_t> sizes;
  int64_t normalized_dims = 1;
  bool weight = true;
  bool bias = true;                  // layer norm only
  std::optional<double> eps = 1e-5;  // None: rms_norm's default
  Fill fill{};
};

torch::jit::Stack arguments_for(const Norm& norm, const at::Tensor& input, const Call& call, uint64_t seed) {
  const std::vector<int64_t> shape(call.sizes.end() - call.normalized_dims, call.sizes.end());
  auto parameter = [&](bool present, uint64_t parameter_seed) {
    Fill fill;
    fill.seed = parameter_seed;
    fill.low = -2;
    fill.high = 2;
    return present ? c10::IValue(samples::make_tensor(shape, input.scalar_type(), input.device(), fill))
                   : c10::IValue();
  };
  const c10::IValue eps = call.eps.has_value() ? c10::IValue(*call.eps) : c10::IValue();
  if (norm.layer) return {input, shape, parameter(call.weight, seed * 3 + 1), parameter(call.bias, seed * 3 + 2), eps};
  return {input, shape, parameter(call.weight, seed * 3 + 1), eps};
}

std::vector<Sample> norm_samples(c10::Device device, c10::ScalarType dtype, const Norm& norm) {
  std::vector<Sample> all;
  uint64_t seed = 300;
  auto add = [&](SampleClass sample_class, Call call) {
    call.fill.seed = ++seed;
    const at::Tensor input = samples::make_tensor(call.sizes, dtype, device, call.fill);
    std::vector<std::string> meant_for;
    const int64_t width = c10::multiply_integers(call.sizes.end() - call.normalized_dims, call.sizes.end());
    const bool handles = norm.triton  ? triton_norm_handles(input, width)
                         : norm.layer ? cuda_norm_handles(input)
                                      : cuda_rms_norm_handles(input, width);
    if (handles) meant_for.push_back(norm.node);
    std::string description = samples::describe(input) + " over " + std::to_string(call.normalized_dims) + " dim";
    if (!call.weight) description += ", no weight";
    if (norm.layer && !call.bias) description += ", no bias";
    description += call.eps.has_value() ? c10::str(", eps ", *call.eps) : ", eps None";
    all.push_back({description, sample_class, arguments_for(norm, input, call, seed), meant_for});
  };
  Fill extreme;  // large magnitudes and NaN; no inf: see inapplicable_classes' note below
  extreme.extreme_magnitude = 1e4;
  extreme.inf = false;
  // A mean away from zero, for the centring (E[x^2] - E[x]^2 would cancel). Not farther:
  // aten's float32 mean is off by up to half its ulp, which normalisation scales by rstd
  // and the weight's gradient sums over rows; from a mean near 10 on (seen on the H200)
  // that alone exceeds float32's tolerance, so kernels that round differently differ.
  Fill offset;
  offset.low = 4;
  offset.high = 5;
  Fill tiny;  // a mean square below float's epsilon: eps decides the result
  tiny.low = -1e-4;
  tiny.high = 1e-4;
  // rms_norm's eps may be None (its default: float's epsilon); layer norm's may not.
  const std::optional<double> default_eps = norm.layer ? std::optional<double>(1e-5) : std::nullopt;

  add(SampleClass::typical, {{64, 1024}});
  add(SampleClass::typical, {{64, 1024}, 1, false, false});
  add(SampleClass::typical, {{8, 16, 256}, 2});
  add(SampleClass::typical, {{32, 512}, 1, true, false, 1e-3});
  add(SampleClass::typical, {{64, 4096}, 1, true, true, 1e-5, offset});
  add(SampleClass::typical, {{16, 3000}, 1, true, true, default_eps, tiny});
  add(SampleClass::typical, {{1, 8192}});  // decode rows: a block each, two vectors a thread
  add(SampleClass::typical, {{8, 16384}});
  add(SampleClass::empty, {{0, 64}});
  add(SampleClass::one_element, {{1, 1}});
  add(SampleClass::one_element, {{4096, 1}});
  add(SampleClass::odd_sizes, {{5, 13109}});
  add(SampleClass::odd_sizes, {{4099, 17}});
  add(SampleClass::odd_sizes, {{1, 4097}});    // a decode row of an odd width
  add(SampleClass::odd_sizes, {{7, 4097}});    // every row a different distance from a vector boundary
  add(SampleClass::odd_sizes, {{3, 151937}});  // cuda: odd rows above 131072, float32 shifted over a cluster
  add(SampleClass::large, {{1024, 1024}});
  add(SampleClass::large, {{64, 32000}});
  add(SampleClass::large, {{300, 16400}});  // triton: persistent, more rows than SMs
  add(SampleClass::large, {{4, 40000}});    // cuda: rows over a cluster, slices not full
  add(SampleClass::large, {{2, 65536}});    // cuda: rows filling a cluster's slices in registers
  add(SampleClass::large, {{3, 65536}});    // cuda: rms_norm's odd rows, one a block (even: two)
  add(SampleClass::large, {{3, 49168}});    // triton: a cluster of 7, the last slice 16 columns
  add(SampleClass::large, {{3, 73744}});    // triton: a wide cluster of 10, the last slice 16 columns
  add(SampleClass::large, {{2, 131072}});   // cuda: 16-bit slices partly in shared memory; triton: 16 full
  add(SampleClass::large, {{2, 100000}});   // cuda: float32 over 512-thread cluster blocks
  add(SampleClass::large, {{3, 151936}});   // cuda: 16-bit over 512-thread blocks, float32 1024, slices not full
  add(SampleClass::large, {{2, 262144}});   // cuda: the widest rows a cluster holds, slices full
  add(SampleClass::large, {{2, 1 << 19}});  // wider than shared memory: read twice
  add(SampleClass::transposed, {{256, 512}, 1, true, true, 1e-5, laid_out(Layout::transposed)});
  add(SampleClass::step_sliced, {{128, 1024}, 1, true, true, 1e-5, laid_out(Layout::step_sliced)});
  add(SampleClass::expanded, {{128, 1024}, 1, true, true, 1e-5, laid_out(Layout::expanded)});
  add(SampleClass::extreme_values, {{64, 1024}, 1, true, true, 1e-5, extreme});
  add(SampleClass::extreme_values, {{64, 1031}, 1, true, true, default_eps, extreme});
  if (device.is_cuda() && !norm.layer) {      // the bounds of the cuda RMS norm's cond, too large for the CPU sweeps
    add(SampleClass::large, {{3072, 2048}});  // accepted: a warp a row, rows enough
    add(SampleClass::large, {{2048, 2560}});  // 16-bit accepted, float32 declined
    add(SampleClass::large, {{512, 4096}});   // declines float32
    add(SampleClass::large, {{2048, 4104}});  // accepted
  }
  if (device.is_cuda()) add(SampleClass::odd_sizes, {{2048, 4097}});  // cuda: float32 held shifted
  return all;
}

// aten checks both norms' shapes alike (seen on the H200: the CUDA _fused_rms_norm too).
std::vector<ErrorSample> norm_errors(c10::Device device, const Norm& norm) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  const at::Tensor input = at::ones({4, 5}, f32);
  auto call = [&](std::vector<int64_t> shape, c10::IValue weight) -> torch::jit::Stack {
    if (norm.layer) return {input, std::move(shape), std::move(weight), c10::IValue(), 1e-5};
    return {input, std::move(shape), std::move(weight), 1e-5};
  };
  return {
      {"normalized_shape not trailing: f32[4,5] over [4]", call({4}, c10::IValue()),
       "expected input with shape [*, 4]"},
      {"weight shaped [4] for normalized_shape [5]", call({5}, at::ones({4}, f32)),
       "Expected weight to be of same shape as normalized_shape"},
  };
}

Cost norm_cost(const torch::jit::Stack& arguments) {
  const at::Tensor& input = arguments[0].toTensor();
  const double n = input.numel();
  double bytes = 2 * n * input.element_size();  // the input read, the output written
  for (size_t i = 2; i < arguments.size(); ++i) {
    if (arguments[i].isTensor()) bytes += arguments[i].toTensor().nbytes();  // weight, bias
  }
  const double rows = n / static_cast<double>(c10::multiply_integers(arguments[1].toIntVector()));
  bytes += rows * sizeof(float) * 2;  // mean and rstd (rstd only for rms_norm: a rounding error)
  return {bytes, 5 * n};
}

// The shapes of ../shared/notes/h200-baseline.md, and a small one where launch cost rules.
std::vector<BenchCase> norm_bench_cases(c10::Device device, const Norm& norm,
                                        const std::vector<std::pair<int64_t, int64_t>>& shapes) {
  std::vector<BenchCase> cases;
  for (const c10::ScalarType dtype : {at::kBFloat16, at::kHalf, at::kFloat}) {
    for (const auto& [rows, width] : shapes) {
      cases.push_back({dtype_name(dtype) + " [" + std::to_string(rows) + "," + std::to_string(width) + "]",
                       [norm, rows, width, dtype, device] {
                         const at::Tensor input = samples::make_tensor({rows, width}, dtype, device);
                         return arguments_for(norm, input, Call{{rows, width}}, 1);
                       },
                       {}});
    }
  }
  return cases;
}

ShapeGrid norm_grid(c10::Device device, const Norm& norm) {
  return row_op_grid(device, [norm](int64_t rows, int64_t width, c10::ScalarType dtype, c10::Device device) {
    const at::TensorOptions options = at::TensorOptions().dtype(dtype).device(device);
    const at::Tensor input = at::empty({rows, width}, options).uniform_(-2, 2);
    const at::Tensor weight = at::empty({width}, options).uniform_(-2, 2);
    const std::vector<int64_t> shape{width};
    if (norm.layer) return torch::jit::Stack{input, shape, weight, at::empty({width}, options).uniform_(-2, 2), 1e-5};
    return torch::jit::Stack{input, shape, weight, 1e-5};
  });
}

OpEntry norm_entry(const char* op_symbol) {
  OpEntry entry;
  entry.op_symbol = op_symbol;
  entry.dsls = {"cuda"};
  entry.devices = {c10::DeviceType::CUDA};
  entry.dtypes = {at::kBFloat16, at::kHalf, at::kFloat};
  entry.differentiable = true;
  entry.inapplicable_classes = {
      {SampleClass::zero_dim, "a norm normalises at least one dimension; a 0-dim input has none"}};
  entry.cost = norm_cost;
  return entry;
}

// native_layer_norm_backward (grad_out, input, normalized_shape, mean, rstd, weight, bias,
// output_mask) and _fused_rms_norm_backward (grad_out, input, normalized_shape, rstd, weight,
// output_mask): their cuda kernel takes contiguous rows of a multiple of 16 bytes and at most
// NATIVE_OPS_NORM_BACKWARD_MAX_VECTORS of them; the samples' tensors are fresh, aligned.
bool backward_rows_fit(int64_t width, int64_t element_size) {
  const int64_t vector = 16 / element_size;
  return width % vector == 0 && width / vector <= NATIVE_OPS_NORM_BACKWARD_MAX_VECTORS;
}
// Those, less where aten is faster (speed.h).
bool cuda_backward_handles(const at::Tensor& grad_out, const at::Tensor& input, int64_t width, bool centered) {
  return cuda_norm_handles(input) && grad_out.is_contiguous() && backward_rows_fit(width, input.element_size()) &&
         cuda_norm_backward_slower_than_aten(input.numel() / width, width, input.element_size(), centered) == nullptr;
}

// The cuda node of the norm's backward.
std::string backward_node(const Norm& norm) {
  return std::string(norm.layer ? "native_layer_norm" : "_fused_rms_norm") + "_backward_cuda_0";
}

struct BackwardCall {
  std::vector<int64_t> sizes;
  int64_t normalized_dims = 1;
  bool weight = true;
  std::array<bool, 3> output_mask{true, true, true};  // input, weight, bias (RMS norm: the first two)
  Fill fill{};                                        // the input's
  Fill grad_fill{};                                   // grad_out's
  bool bias = true;                                   // layer norm only
};

// How the backward samples' tensors are made: samples::make_tensor for the sweeps (any
// fill, drawn on the host); the grid and bench draw on the device (gigabytes).
using MakeTensor = std::function<at::Tensor(const std::vector<int64_t>& sizes, c10::ScalarType dtype,
                                            c10::Device device, const Fill& fill)>;

at::Tensor uniform_on_device(const std::vector<int64_t>& sizes, c10::ScalarType dtype, c10::Device device,
                             const Fill& fill) {
  return at::empty(sizes, at::TensorOptions().dtype(dtype).device(device)).uniform_(fill.low, fill.high);
}

// The statistics as the forward gives them: float32, one per row, the normalised dimensions
// kept as 1 (mean only for layer norm).
torch::jit::Stack backward_arguments(const Norm& norm, const at::Tensor& input, const BackwardCall& call, uint64_t seed,
                                     const MakeTensor& make = samples::make_tensor) {
  const std::vector<int64_t> shape(call.sizes.end() - call.normalized_dims, call.sizes.end());
  std::vector<int64_t> dims;
  for (int64_t d = input.dim() - call.normalized_dims; d < input.dim(); ++d) dims.push_back(d);
  const at::Tensor x = input.to(at::kFloat);
  const at::Tensor mean = x.mean(dims, /*keepdim=*/true);
  const at::Tensor rstd = norm.layer ? at::rsqrt((x - mean).square().mean(dims, /*keepdim=*/true) + 1e-5)
                                     : at::rsqrt(x.square().mean(dims, /*keepdim=*/true) + 1e-5);
  Fill grad_fill = call.grad_fill;
  grad_fill.seed = seed * 3 + 1;
  grad_fill.low = -1;
  grad_fill.high = 1;
  auto parameter = [&](bool present, uint64_t parameter_seed) {
    Fill fill;
    fill.seed = parameter_seed;
    fill.low = -2;
    fill.high = 2;
    return present ? c10::IValue(make(shape, input.scalar_type(), input.device(), fill)) : c10::IValue();
  };
  const at::Tensor grad_out = make(call.sizes, input.scalar_type(), input.device(), grad_fill);
  const c10::IValue weight = parameter(call.weight, seed * 3 + 2);
  const auto& m = call.output_mask;
  if (norm.layer) {
    return {grad_out,
            input,
            shape,
            mean,
            rstd,
            weight,
            parameter(call.bias, seed * 3 + 3),
            c10::List<bool>({m[0], m[1], m[2]})};
  }
  return {grad_out, input, shape, rstd, weight, c10::List<bool>({m[0], m[1]})};
}

std::vector<Sample> backward_samples(c10::Device device, c10::ScalarType dtype, const Norm& norm) {
  const std::string node = backward_node(norm);
  const size_t gradients = norm.layer ? 3 : 2;
  std::vector<Sample> all;
  uint64_t seed = 700;
  auto add = [&](SampleClass sample_class, BackwardCall call) {
    call.fill.seed = ++seed;
    const at::Tensor input = samples::make_tensor(call.sizes, dtype, device, call.fill);
    torch::jit::Stack arguments = backward_arguments(norm, input, call, seed);
    const int64_t width = c10::multiply_integers(call.sizes.end() - call.normalized_dims, call.sizes.end());
    std::vector<std::string> meant_for;
    if (input.numel() > 0 && cuda_backward_handles(arguments[0].toTensor(), input, width, norm.layer)) {
      meant_for.push_back(node);
    }
    std::string description = "grad " + samples::describe(arguments[0].toTensor()) + ", input " +
                              samples::describe(input) + " over " + std::to_string(call.normalized_dims) + " dim";
    if (!call.weight) description += ", no weight";
    if (norm.layer && !call.bias) description += ", no bias";
    description += ", output_mask [";
    for (size_t i = 0; i < gradients; ++i)
      description += std::string(i > 0 ? ", " : "") + c10::str(call.output_mask[i]);
    all.push_back({description + "]", sample_class, std::move(arguments), meant_for});
  };
  Fill extreme;  // large magnitudes and NaN (an inf makes the row's rstd 0 and its gradient NaN alike)
  extreme.extreme_magnitude = 1e4;
  extreme.inf = false;
  // RMS norm: rows far from zero (rstd small, the xhat term large). Layer norm: a mean away
  // from zero, within the bound the forward's samples explain (aten's float32 mean off by
  // half its ulp, scaled by rstd, summed over rows by the weight's gradient).
  Fill offset;
  offset.low = norm.layer ? 4 : 40;
  offset.high = norm.layer ? 5 : 50;
  // Fewer than 128 rows go to aten (speed.h): the cuda kernel's samples have more.
  add(SampleClass::typical, {{128, 1024}});
  add(SampleClass::typical, {{128, 1024}, 1, true, {true, false, false}});
  add(SampleClass::typical, {{128, 1024}, 1, true, {false, true, false}});
  add(SampleClass::typical, {{128, 1024}, 1, false, {true, false, true}});
  if (norm.layer) {
    add(SampleClass::typical, {{128, 1024}, 1, true, {false, false, true}});
    add(SampleClass::typical, {{128, 1024}, 1, true, {true, true, false}, {}, {}, false});
  }
  // 16-bit: the column gradients apart (speed.h), without grad_in and without the bias's.
  add(SampleClass::typical, {{160, 4096}, 1, true, {false, true, true}});
  if (norm.layer) add(SampleClass::typical, {{160, 4096}, 1, true, {true, true, false}, {}, {}, false});
  add(SampleClass::typical, {{128, 16, 256}, 2});
  add(SampleClass::typical, {{160, 4096}, 1, true, {true, true, true}, offset});
  add(SampleClass::typical, {{1024, 5120}, 1, true, {true, true, true}, offset});  // 16-bit: the cuda kernel's
  add(SampleClass::typical, {{133, 200}});  // a warp per row, part of its lanes idle
  add(SampleClass::typical, {{1, 4096}});   // a decode row: aten's
  add(SampleClass::empty, {{0, 64}});
  add(SampleClass::one_element, {{1, 1}});
  add(SampleClass::one_element, {{4099, 8}});  // one vector a row (16-bit), many rows a block
  add(SampleClass::odd_sizes, {{5, 1031}});
  add(SampleClass::odd_sizes, {{4099, 24}});
  add(SampleClass::large, {{1024, 1024}});
  add(SampleClass::large, {{300, 8192}});   // few rows: the column gradients apart
  add(SampleClass::large, {{200, 16384}});  // the same, the widest 16-bit rows it takes
  add(SampleClass::large, {{4099, 2560}});  // many rows: in the rows kernel
  add(SampleClass::large, {{1024, 8192}});
  add(SampleClass::large, {{768, 16384}});  // float32's go to aten
  add(SampleClass::large, {{40, 20000}});   // wider: aten's
  add(SampleClass::transposed, {{256, 512}, 1, true, {true, true, true}, laid_out(Layout::transposed)});
  add(SampleClass::step_sliced, {{128, 1024}, 1, true, {true, true, true}, {}, laid_out(Layout::step_sliced)});
  // grad_out of y.sum(): one row broadcast over all (stride 0)
  add(SampleClass::expanded, {{128, 1024}, 1, true, {true, true, true}, {}, laid_out(Layout::expanded)});
  add(SampleClass::extreme_values, {{128, 1024}, 1, true, {true, true, true}, extreme});
  return all;
}

// aten's checks (seen on the H200); the cond declines each call, so aten raises them.
std::vector<ErrorSample> backward_errors(c10::Device device, const Norm& norm) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  const at::Tensor input = at::ones({4, 5}, f32);
  const at::Tensor statistic = at::ones({4, 1}, f32);
  auto call = [&](at::Tensor grad_out, std::vector<int64_t> shape, c10::IValue weight, bool grad_weight) {
    if (norm.layer) {
      return torch::jit::Stack{std::move(grad_out), input,
                               std::move(shape),    statistic,
                               statistic,           std::move(weight),
                               c10::IValue(),       c10::List<bool>({true, grad_weight, false})};
    }
    return torch::jit::Stack{std::move(grad_out), input,
                             std::move(shape),    statistic,
                             std::move(weight),   c10::List<bool>({true, grad_weight})};
  };
  std::vector<ErrorSample> errors = {
      {"normalized_shape not trailing: f32[4,5] over [4]", call(at::ones({4, 5}, f32), {4}, c10::IValue(), false),
       "expected input with shape [*, 4]"},
      {"weight shaped [4] for normalized_shape [5]", call(at::ones({4, 5}, f32), {5}, at::ones({4}, f32), true),
       "Expected weight to be of same shape as normalized_shape"},
  };
  if (!norm.layer) {
    errors.push_back({"grad_out f32[4,6] for input f32[4,5]", call(at::ones({4, 6}, f32), {5}, c10::IValue(), false),
                      "Expected dY.numel() == M * N"});
  }
  return errors;
}

Cost backward_cost(const torch::jit::Stack& arguments) {
  const at::Tensor& grad_out = arguments[0].toTensor();
  const bool layer = arguments.size() == 8;
  const auto mask = arguments.back().toBoolList();
  const double n = grad_out.numel();
  double bytes = (mask[0] ? 3 : 2) * n * grad_out.element_size();           // grad_out, input read; grad_input written
  bytes += (layer ? 2 : 1) * arguments[layer ? 4 : 3].toTensor().nbytes();  // rstd (and mean)
  const size_t weight = layer ? 5 : 4;
  if (arguments[weight].isTensor()) bytes += (mask[1] ? 2 : 1) * arguments[weight].toTensor().nbytes();
  if (layer && mask[2] && arguments[6].isTensor()) bytes += arguments[6].toTensor().nbytes();  // grad_bias written
  return {bytes, (layer ? 8 : 6) * n};
}

std::vector<BenchCase> backward_bench_cases(c10::Device device, const Norm& norm) {
  std::vector<BenchCase> cases;
  const std::vector<std::pair<int64_t, int64_t>> shapes{
      {64, 1024}, {32768, 4096}, {65536, 1024}, {8192, 8192}, {4096, 16384}};
  for (const c10::ScalarType dtype : {at::kBFloat16, at::kHalf, at::kFloat}) {
    for (const auto& [rows, width] : shapes) {
      for (const bool columns : {true, false}) {
        if (!columns && rows != 32768) continue;  // the input's gradient alone, at one shape
        cases.push_back({dtype_name(dtype) + " [" + std::to_string(rows) + "," + std::to_string(width) + "]" +
                             (columns ? "" : " input only"),
                         [norm, rows, width, dtype, device, columns] {
                           const at::Tensor input = uniform_on_device({rows, width}, dtype, device, Fill{});
                           return backward_arguments(norm, input,
                                                     BackwardCall{{rows, width}, 1, true, {true, columns, columns}}, 1,
                                                     uniform_on_device);
                         },
                         {}});
      }
    }
  }
  return cases;
}

ShapeGrid backward_grid(c10::Device device, const Norm& norm) {
  ShapeGrid grid = row_op_grid(device, [norm](int64_t rows, int64_t width, c10::ScalarType dtype, c10::Device device) {
    const at::Tensor input = uniform_on_device({rows, width}, dtype, device, Fill{});
    return backward_arguments(norm, input, BackwardCall{{rows, width}}, 1, uniform_on_device);
  });
  const std::string node = backward_node(norm);
  grid.impl_correct_for = [node](const std::vector<int64_t>& point, c10::ScalarType dtype) {
    return backward_rows_fit(point[1], static_cast<int64_t>(c10::elementSize(dtype))) ? std::vector<std::string>{node}
                                                                                      : std::vector<std::string>{};
  };
  return grid;
}

OpEntry backward_entry(const char* op_symbol, const Norm& norm) {
  OpEntry entry = norm_entry(op_symbol);
  entry.differentiable = false;  // a gradient itself; its double backward is not judged
  entry.cost = backward_cost;
  // The column gradients sum every row's products: in float32, over the thousands of rows of
  // a sample, summed in another order than aten's, the two differ by more than float32's
  // default tolerance (seen at [4099,24]: 4.6e-6 relative; at [1024,8192] 1.3e-5 absolute on
  // a sum of 1024 unit products, -0.0424); the float64 check still bounds them by aten's own
  // error.
  entry.tolerances = {{at::kFloat, {1e-5, 5e-5}}};
  entry.samples = [norm](c10::Device device, c10::ScalarType dtype) { return backward_samples(device, dtype, norm); };
  entry.error_samples = [norm](c10::Device device) { return backward_errors(device, norm); };
  entry.bench_cases = [norm](c10::Device device) { return backward_bench_cases(device, norm); };
  entry.grid = [norm](c10::Device device) { return backward_grid(device, norm); };
  return entry;
}

}  // namespace

// Extreme values carry no inf: a row holding +inf has an undefined mean, and which NaN or
// inf a kernel reports for it depends on its order of summation, not on correctness.
void register_norm_op_db() {
  OpEntry layer_norm = norm_entry("native_layer_norm");
  layer_norm.samples = [](c10::Device device, c10::ScalarType dtype) {
    return norm_samples(device, dtype, kLayerNorm);
  };
  layer_norm.error_samples = [](c10::Device device) { return norm_errors(device, kLayerNorm); };
  layer_norm.bench_cases = [](c10::Device device) {
    return norm_bench_cases(device, kLayerNorm, {{64, 1024}, {32768, 4096}, {65536, 1024}, {1024, 65536}});
  };
  layer_norm.grid = [](c10::Device device) { return norm_grid(device, kLayerNorm); };
  register_op_entry(std::move(layer_norm));

  OpEntry rms_norm = norm_entry("_fused_rms_norm");
  rms_norm.samples = [](c10::Device device, c10::ScalarType dtype) { return norm_samples(device, dtype, kRmsNorm); };
  rms_norm.error_samples = [](c10::Device device) { return norm_errors(device, kRmsNorm); };
  rms_norm.bench_cases = [](c10::Device device) {
    return norm_bench_cases(device, kRmsNorm, {{64, 1024}, {32768, 4096}, {4096, 32000}, {1024, 65536}});
  };
  rms_norm.grid = [](c10::Device device) { return norm_grid(device, kRmsNorm); };
  register_op_entry(rms_norm);

  rms_norm.dsls = {"triton"};
  rms_norm.samples = [](c10::Device device, c10::ScalarType dtype) {
    return norm_samples(device, dtype, kTritonRmsNorm);
  };
  register_op_entry(std::move(rms_norm));

  register_op_entry(backward_entry("_fused_rms_norm_backward", kRmsNorm));
  register_op_entry(backward_entry("native_layer_norm_backward", kLayerNorm));
}

}  // namespace native_ops::kernels
