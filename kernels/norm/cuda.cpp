// native_layer_norm and _fused_rms_norm at CUDA over the trailing dimensions of contiguous
// float32, float16 and bfloat16 tensors: one DRAM read and one write per element
// (kernels/norm/cuda_kernels.cu). Like aten's CUDA kernels they return the row statistics
// (mean, rstd) in float32, shaped like the input with the normalised dimensions kept as 1;
// aten's backward kernels consume them as they are. native_layer_norm_backward and
// _fused_rms_norm_backward at CUDA for rows up to 16384 16-bit (8192 float32) elements:
// grad_out and the input read once, grad_input written once
// (kernels/norm/cuda_backward_kernels.cu).
#include <array>
#include <limits>

#include <ATen/core/Tensor.h>
#include <ATen/ops/_fused_rms_norm_backward_ops.h>
#include <ATen/ops/_fused_rms_norm_ops.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/native_layer_norm_backward_ops.h>
#include <ATen/ops/native_layer_norm_ops.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/SymIntArrayRef.h>

#include "cuda_abi.h"
#include "dsls/cuda/kernels_library.h"
#include "gpu_domain.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

struct Normalized {
  at::Tensor out;
  at::Tensor mean;  // undefined for RMS norm
  at::Tensor rstd;
};

Normalized normalize(const at::Tensor& input, at::IntArrayRef normalized_shape, const std::optional<at::Tensor>& weight,
                     const std::optional<at::Tensor>& bias, double eps, bool centered) {
  const c10::DeviceGuard device(input.device());
  std::vector<int64_t> stat_shape(input.sizes().begin(), input.sizes().end());
  std::fill(stat_shape.end() - static_cast<int64_t>(normalized_shape.size()), stat_shape.end(), 1);
  const auto stat_options = input.options().dtype(at::kFloat);
  Normalized result{at::empty(input.sizes(), input.options()),
                    centered ? at::empty(stat_shape, stat_options) : at::Tensor(), at::empty(stat_shape, stat_options)};
  auto pointer = [](const std::optional<at::Tensor>& tensor) {
    return tensor.has_value() && tensor->defined() ? tensor->const_data_ptr() : nullptr;
  };
  const int64_t width = c10::multiply_integers(normalized_shape);
  // Only layer norm's persistent kernel uses it; from the caching allocator, stream-ordered.
  const at::Tensor workspace =
      centered ? at::empty({NATIVE_OPS_NORM_ROWS_WORKSPACE_BYTES}, input.options().dtype(at::kByte)) : at::Tensor();
  static const auto norm_rows = cuda::kernel<NativeOpsNormRowsFn>(NATIVE_OPS_NORM_ROWS_SYMBOL);
  cuda::check(
      norm_rows(cuda::dtype_code(input), centered ? 1 : 0, input.const_data_ptr(), pointer(weight), pointer(bias),
                result.out.mutable_data_ptr(), centered ? result.mean.mutable_data_ptr<float>() : nullptr,
                result.rstd.mutable_data_ptr<float>(), input.numel() / width, width, static_cast<float>(eps),
                centered ? workspace.mutable_data_ptr() : nullptr, cuda::current_stream(input)),
      centered ? "layer_norm_rows" : "rms_norm_rows");
  return result;
}

Verdict layer_norm_applies(const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                           const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias, double) {
  const auto shape = c10::asIntArrayRefSlowOpt(normalized_shape);
  if (!shape.has_value()) return decline("symbolic normalized_shape");
  return gpu_norm_applies(input, *shape, weight, bias);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm(const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                                                          const std::optional<at::Tensor>& weight,
                                                          const std::optional<at::Tensor>& bias, double eps) {
  Normalized result = normalize(input, c10::asIntArrayRefUnchecked(normalized_shape), weight, bias, eps, true);
  return {std::move(result.out), std::move(result.mean), std::move(result.rstd)};
}

Verdict rms_norm_applies(const at::Tensor& input, at::IntArrayRef normalized_shape,
                         const std::optional<at::Tensor>& weight, std::optional<double>) {
  if (const Verdict gpu = gpu_norm_applies(input, normalized_shape, weight, std::nullopt); !gpu.accepted()) return gpu;
  const int64_t width = c10::multiply_integers(normalized_shape);
  if (const char* slower = cuda_rms_norm_slower_than_aten(input.numel() / width, width, input.element_size())) {
    return decline(slower);
  }
  return true;
}

std::tuple<at::Tensor, at::Tensor> rms_norm(const at::Tensor& input, at::IntArrayRef normalized_shape,
                                            const std::optional<at::Tensor>& weight, std::optional<double> eps) {
  // aten's default: the epsilon of float, the type the statistics are computed in.
  Normalized result = normalize(input, normalized_shape, weight, std::nullopt,
                                eps.value_or(std::numeric_limits<float>::epsilon()), false);
  return {std::move(result.out), std::move(result.rstd)};
}

// The gradients a backward call asks for, and whether their column operands exist.
struct BackwardMask {
  bool input, weight, bias;
};

// The backward kernel's domain: rows of a multiple of 16 bytes, at most
// NATIVE_OPS_NORM_BACKWARD_MAX_VECTORS of them (wider rows do not fit its registers),
// grad_out like the input, mean (layer norm; null for RMS norm) and rstd one float32 per
// row, every pointer 16-byte aligned.
Verdict norm_backward_applies(const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape,
                              const at::Tensor* mean, const at::Tensor& rstd, const std::optional<at::Tensor>& weight,
                              const std::optional<at::Tensor>& bias, BackwardMask mask) {
  if (!mask.input && !mask.weight && !mask.bias) return decline("output_mask asks for no gradient");
  const bool has_weight = weight.has_value() && weight->defined();
  if (mask.weight && !has_weight) return decline("a weight gradient without a weight");
  if (mask.bias && !(bias.has_value() && bias->defined())) return decline("a bias gradient without a bias");
  if (const Verdict verdict = gpu_norm_applies(input, normalized_shape, weight, bias); !verdict.accepted()) {
    return verdict;
  }
  if (grad_out.sizes() != input.sizes())
    return decline("grad_out is not shaped like the input (aten reports the error)");
  if (grad_out.scalar_type() != input.scalar_type()) return decline("grad_out's dtype differs from the input's");
  if (grad_out.device() != input.device()) return decline("grad_out is on another device");
  if (!grad_out.is_contiguous() || grad_out.is_neg()) return decline("grad_out is not contiguous");
  const int64_t width = c10::multiply_integers(normalized_shape);
  auto row_statistic = [&](const at::Tensor& statistic) {
    return statistic.scalar_type() == at::kFloat && statistic.device() == input.device() && statistic.is_contiguous() &&
           statistic.numel() == input.numel() / width;
  };
  if (!row_statistic(rstd) || (mean != nullptr && !row_statistic(*mean))) {
    return decline("mean or rstd is not one contiguous float32 per row on the input's device");
  }
  const int64_t vector = 16 / static_cast<int64_t>(input.element_size());
  if (width % vector != 0) return decline("rows are not a multiple of 16 bytes");
  // A literal reason (a decline allocates nothing on the routing path), tied to the limit:
  static_assert(NATIVE_OPS_NORM_BACKWARD_MAX_VECTORS * 8 == 16384, "the reason below names the limit");
  if (width / vector > NATIVE_OPS_NORM_BACKWARD_MAX_VECTORS) {
    return decline("rows wider than 16384 16-bit or 8192 float32 elements: aten's kernel");
  }
  auto aligned = [](const at::Tensor& tensor) {
    return reinterpret_cast<uintptr_t>(tensor.const_data_ptr()) % 16 == 0;
  };
  if (!aligned(input) || !aligned(grad_out) || (has_weight && !aligned(*weight))) {
    return decline("a tensor not aligned to 16 bytes");
  }
  if (const char* slower =
          cuda_norm_backward_slower_than_aten(input.numel() / width, width, input.element_size(), mean != nullptr)) {
    return decline(slower);
  }
  return true;
}

struct NormGradients {
  at::Tensor input, weight, bias;
};

NormGradients norm_backward(const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape,
                            const at::Tensor* mean, const at::Tensor& rstd, const std::optional<at::Tensor>& weight,
                            const std::optional<at::Tensor>& bias, BackwardMask mask) {
  const c10::DeviceGuard device(input.device());
  const int64_t width = c10::multiply_integers(normalized_shape);
  const int64_t rows = input.numel() / width;
  const int dtype = cuda::dtype_code(input);
  const bool has_weight = weight.has_value() && weight->defined();
  NormGradients grads;
  if (mask.input) grads.input = at::empty(input.sizes(), input.options());
  if (mask.weight) grads.weight = at::empty(weight->sizes(), weight->options());
  if (mask.bias) grads.bias = at::empty(bias->sizes(), bias->options());
  static const auto norm_backward_workspace =
      cuda::kernel<NativeOpsNormBackwardWorkspaceFn>(NATIVE_OPS_NORM_BACKWARD_WORKSPACE_SYMBOL);
  static const auto norm_backward_rows =
      cuda::kernel<NativeOpsNormBackwardRowsFn>(NATIVE_OPS_NORM_BACKWARD_ROWS_SYMBOL);
  at::Tensor workspace;
  if (mask.weight || mask.bias) {
    int64_t floats = 0;
    cuda::check(norm_backward_workspace(dtype, mean != nullptr ? 1 : 0, rows, width, &floats),
                "norm_backward_workspace");
    workspace = at::empty({floats}, input.options().dtype(at::kFloat));
  }
  auto pointer = [](at::Tensor& tensor) { return tensor.defined() ? tensor.mutable_data_ptr() : nullptr; };
  cuda::check(
      norm_backward_rows(dtype, grad_out.const_data_ptr(), input.const_data_ptr(),
                         mean != nullptr ? mean->const_data_ptr<float>() : nullptr, rstd.const_data_ptr<float>(),
                         has_weight ? weight->const_data_ptr() : nullptr, pointer(grads.input), pointer(grads.weight),
                         pointer(grads.bias), workspace.defined() ? workspace.mutable_data_ptr<float>() : nullptr,
                         workspace.defined() ? workspace.numel() : 0, rows, width, cuda::current_stream(input)),
      "norm_backward_rows");
  return grads;
}

Verdict rms_norm_backward_applies(const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape,
                                  const at::Tensor& rstd, const std::optional<at::Tensor>& weight,
                                  std::array<bool, 2> output_mask) {
  return norm_backward_applies(grad_out, input, normalized_shape, nullptr, rstd, weight, std::nullopt,
                               {output_mask[0], output_mask[1], false});
}

std::tuple<at::Tensor, at::Tensor> rms_norm_backward(const at::Tensor& grad_out, const at::Tensor& input,
                                                     at::IntArrayRef normalized_shape, const at::Tensor& rstd,
                                                     const std::optional<at::Tensor>& weight,
                                                     std::array<bool, 2> output_mask) {
  NormGradients grads = norm_backward(grad_out, input, normalized_shape, nullptr, rstd, weight, std::nullopt,
                                      {output_mask[0], output_mask[1], false});
  return {std::move(grads.input), std::move(grads.weight)};
}

Verdict layer_norm_backward_applies(const at::Tensor& grad_out, const at::Tensor& input,
                                    c10::SymIntArrayRef normalized_shape, const at::Tensor& mean,
                                    const at::Tensor& rstd, const std::optional<at::Tensor>& weight,
                                    const std::optional<at::Tensor>& bias, std::array<bool, 3> output_mask) {
  const auto shape = c10::asIntArrayRefSlowOpt(normalized_shape);
  if (!shape.has_value()) return decline("symbolic normalized_shape");
  return norm_backward_applies(grad_out, input, *shape, &mean, rstd, weight, bias,
                               {output_mask[0], output_mask[1], output_mask[2]});
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_backward(const at::Tensor& grad_out, const at::Tensor& input,
                                                                   c10::SymIntArrayRef normalized_shape,
                                                                   const at::Tensor& mean, const at::Tensor& rstd,
                                                                   const std::optional<at::Tensor>& weight,
                                                                   const std::optional<at::Tensor>& bias,
                                                                   std::array<bool, 3> output_mask) {
  NormGradients grads = norm_backward(grad_out, input, c10::asIntArrayRefUnchecked(normalized_shape), &mean, rstd,
                                      weight, bias, {output_mask[0], output_mask[1], output_mask[2]});
  return {std::move(grads.input), std::move(grads.weight), std::move(grads.bias)};
}

}  // namespace

void register_norm_cuda() {
  register_op_override<at::_ops::native_layer_norm>("cuda", c10::DispatchKey::CUDA, &layer_norm_applies, &layer_norm);
  register_op_override<at::_ops::_fused_rms_norm>("cuda", c10::DispatchKey::CUDA, &rms_norm_applies, &rms_norm);
  register_op_override<at::_ops::_fused_rms_norm_backward>("cuda", c10::DispatchKey::CUDA, &rms_norm_backward_applies,
                                                           &rms_norm_backward);
  register_op_override<at::_ops::native_layer_norm_backward>("cuda", c10::DispatchKey::CUDA,
                                                             &layer_norm_backward_applies, &layer_norm_backward);
}

}  // namespace native_ops::kernels
