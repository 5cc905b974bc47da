// _fused_rms_norm at CUDA over the trailing dimensions in Triton
// (kernels/norm/triton.py, compiled ahead of time): one row per program, held in
// registers up to 16384 elements; a few programs per SM taking rows in turn and holding
// them up to 32768; a cluster of programs per row up to 131072; a few programs per SM
// reading rows in chunks wider. Returns float32 rstd
// shaped like the input with the normalised dimensions kept as 1, as aten's CUDA kernel
// does.
#include <limits>
#include <string>

#include <ATen/core/Tensor.h>
#include <ATen/ops/_fused_rms_norm_ops.h>
#include <ATen/ops/empty.h>

#include "dsls/triton/launch.h"
#include "dsls/triton/rows.h"
#include "gpu_domain.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"

namespace native_ops::kernels {

namespace {

Verdict rms_norm_triton_applies(const at::Tensor& input, at::IntArrayRef normalized_shape,
                                const std::optional<at::Tensor>& weight, std::optional<double>) {
  if (const Verdict verdict = gpu_norm_applies(input, normalized_shape, weight, std::nullopt); !verdict.accepted()) {
    return verdict;
  }
  const int64_t width = c10::multiply_integers(normalized_shape);
  if (weight.has_value() && weight->defined()) {
    return triton_rows::layout_applies(width, {input.const_data_ptr(), weight->const_data_ptr()});
  }
  return triton_rows::layout_applies(width, {input.const_data_ptr()});
}

// Per dtype, weight or not: the variants of lib/src/dsls/triton/rows.h's ladder.
const triton::Artifact& rms_norm_kernel(const at::Tensor& input, bool has_weight, int64_t width) {
  static const std::vector<const triton::Artifact*> kernels = [] {
    std::vector<const triton::Artifact*> all;
    for (const char* dtype : triton::kDtypeKeys) {
      for (const char* weighted : {":plain:", ":weight:"}) {
        const std::string prefix = std::string("rms_norm_rows:") + dtype + weighted;
        for (const std::string& suffix : triton_rows::key_suffixes()) all.push_back(&triton::find(prefix + suffix));
      }
    }
    return all;
  }();
  return *kernels[(triton::dtype_index(input) * 2 + (has_weight ? 1 : 0)) * triton_rows::kVariants +
                  triton_rows::variant(width)];
}

std::tuple<at::Tensor, at::Tensor> rms_norm_triton(const at::Tensor& input, at::IntArrayRef normalized_shape,
                                                   const std::optional<at::Tensor>& weight, std::optional<double> eps) {
  std::vector<int64_t> stat_shape(input.sizes().begin(), input.sizes().end());
  std::fill(stat_shape.end() - static_cast<int64_t>(normalized_shape.size()), stat_shape.end(), 1);
  at::Tensor out = at::empty(input.sizes(), input.options());
  at::Tensor rstd = at::empty(stat_shape, input.options().dtype(at::kFloat));
  const bool has_weight = weight.has_value() && weight->defined();
  const int32_t width = static_cast<int32_t>(c10::multiply_integers(normalized_shape));
  // aten's default: the epsilon of float, the type the statistics are computed in.
  const float epsilon = static_cast<float>(eps.value_or(std::numeric_limits<float>::epsilon()));
  const void* x = input.const_data_ptr();
  const void* w = has_weight ? weight->const_data_ptr() : nullptr;
  void* y = out.mutable_data_ptr();
  void* r = rstd.mutable_data_ptr();
  const int32_t rows = static_cast<int32_t>(input.numel() / width);
  const triton::Artifact& kernel = rms_norm_kernel(input, has_weight, width);
  const triton::Grid grid = triton_rows::rows_grid(kernel, rows, width, input);
  if (triton_rows::rows_in_turn(width)) {
    triton::launch(kernel, grid, {&x, &w, &y, &r, &rows, &width, &epsilon}, input);
  } else {
    triton::launch(kernel, grid, {&x, &w, &y, &r, &width, &epsilon}, input);
  }
  return {std::move(out), std::move(rstd)};
}

}  // namespace

void register_norm_triton() {
  register_op_override<at::_ops::_fused_rms_norm>("triton", c10::DispatchKey::CUDA, &rms_norm_triton_applies,
                                                  &rms_norm_triton);
}

}  // namespace native_ops::kernels
