// native_layer_norm and _fused_rms_norm at CUDA over the trailing dimensions of contiguous
// float32, float16 and bfloat16 tensors: one DRAM read and one write per element
// (kernels/norm/cuda_kernels.cu). Like aten's CUDA kernels they return the row statistics
// (mean, rstd) in float32, shaped like the input with the normalised dimensions kept as 1;
// aten's backward kernels consume them as they are.
#include <limits>

#include <c10/core/DeviceGuard.h>
#include <c10/core/SymIntArrayRef.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_fused_rms_norm_ops.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/native_layer_norm_ops.h>

#include "builtin.h"
#include "norm/gpu_domain.h"
#include "dsls/cuda_kernels.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"

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
  cuda::check(cuda::kernels().norm_rows(cuda::dtype_code(input), centered ? 1 : 0, input.const_data_ptr(),
                                        pointer(weight), pointer(bias), result.out.mutable_data_ptr(),
                                        centered ? result.mean.mutable_data_ptr<float>() : nullptr,
                                        result.rstd.mutable_data_ptr<float>(), input.numel() / width, width,
                                        static_cast<float>(eps), cuda::current_stream(input)),
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
  return gpu_norm_applies(input, normalized_shape, weight, std::nullopt);
}

std::tuple<at::Tensor, at::Tensor> rms_norm(const at::Tensor& input, at::IntArrayRef normalized_shape,
                                            const std::optional<at::Tensor>& weight, std::optional<double> eps) {
  // aten's default: the epsilon of float, the type the statistics are computed in.
  Normalized result = normalize(input, normalized_shape, weight, std::nullopt,
                                eps.value_or(std::numeric_limits<float>::epsilon()), false);
  return {std::move(result.out), std::move(result.rstd)};
}

}  // namespace

void register_norm_cuda_overrides() {
  register_op_override<at::_ops::native_layer_norm>("cuda", c10::DispatchKey::CUDA, &layer_norm_applies, &layer_norm);
  register_op_override<at::_ops::_fused_rms_norm>("cuda", c10::DispatchKey::CUDA, &rms_norm_applies, &rms_norm);
}

}  // namespace native_ops::kernels
