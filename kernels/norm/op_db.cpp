// The op database entries of native_layer_norm and _fused_rms_norm: what judges and
// measures their cuda overrides.
#include <ATen/ATen.h>

#include "builtin.h"
#include "native_ops/op_db.h"
#include "native_ops/samples.h"

namespace native_ops::kernels {

namespace {

using samples::Fill;
using samples::Layout;
using samples::laid_out;

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
  bool bias = true;  // layer norm only
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
    if (norm.triton ? triton_norm_handles(input, width) : cuda_norm_handles(input)) meant_for.push_back(norm.node);
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
  add(SampleClass::empty, {{0, 64}});
  add(SampleClass::one_element, {{1, 1}});
  add(SampleClass::one_element, {{4096, 1}});
  add(SampleClass::odd_sizes, {{5, 13109}});
  add(SampleClass::odd_sizes, {{4099, 17}});
  add(SampleClass::large, {{1024, 1024}});
  add(SampleClass::large, {{64, 32000}});
  add(SampleClass::large, {{300, 16400}});   // triton: persistent, more rows than SMs
  add(SampleClass::large, {{4, 40000}});     // cuda: 16-bit rows half in shared memory
  add(SampleClass::large, {{2, 1 << 19}});  // wider than shared memory: read twice
  add(SampleClass::transposed, {{256, 512}, 1, true, true, 1e-5, laid_out(Layout::transposed)});
  add(SampleClass::step_sliced, {{128, 1024}, 1, true, true, 1e-5, laid_out(Layout::step_sliced)});
  add(SampleClass::expanded, {{128, 1024}, 1, true, true, 1e-5, laid_out(Layout::expanded)});
  add(SampleClass::extreme_values, {{64, 1024}, 1, true, true, 1e-5, extreme});
  add(SampleClass::extreme_values, {{64, 1031}, 1, true, true, default_eps, extreme});
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
      {"normalized_shape not trailing: f32[4,5] over [4]", call({4}, c10::IValue()), "expected input with shape [*, 4]"},
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
      cases.push_back({samples::dtype_name(dtype) + " [" + std::to_string(rows) + "," + std::to_string(width) + "]",
                       [norm, rows, width, dtype, device] {
                         const at::Tensor input = samples::make_tensor({rows, width}, dtype, device);
                         return arguments_for(norm, input, Call{{rows, width}}, 1);
                       },
                       {}});
    }
  }
  return cases;
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

}  // namespace

// Extreme values carry no inf: a row holding +inf has an undefined mean, and which NaN or
// inf a kernel reports for it depends on its order of summation, not on correctness.
void register_norm_op_entry() {
  OpEntry layer_norm = norm_entry("native_layer_norm");
  layer_norm.samples = [](c10::Device device, c10::ScalarType dtype) { return norm_samples(device, dtype, kLayerNorm); };
  layer_norm.error_samples = [](c10::Device device) { return norm_errors(device, kLayerNorm); };
  layer_norm.bench_cases = [](c10::Device device) {
    return norm_bench_cases(device, kLayerNorm, {{64, 1024}, {32768, 4096}, {65536, 1024}, {1024, 65536}});
  };
  register_op_entry(std::move(layer_norm));

  OpEntry rms_norm = norm_entry("_fused_rms_norm");
  rms_norm.samples = [](c10::Device device, c10::ScalarType dtype) { return norm_samples(device, dtype, kRmsNorm); };
  rms_norm.error_samples = [](c10::Device device) { return norm_errors(device, kRmsNorm); };
  rms_norm.bench_cases = [](c10::Device device) {
    return norm_bench_cases(device, kRmsNorm, {{64, 1024}, {32768, 4096}, {4096, 32000}, {1024, 65536}});
  };
  register_op_entry(rms_norm);

  rms_norm.dsls = {"triton"};
  rms_norm.samples = [](c10::Device device, c10::ScalarType dtype) {
    return norm_samples(device, dtype, kTritonRmsNorm);
  };
  register_op_entry(std::move(rms_norm));
}

}  // namespace native_ops::kernels
