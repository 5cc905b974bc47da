// _softmax and _log_softmax at CUDA over the last dimension in Triton
// (kernels/softmax/triton.py, compiled ahead of time): one row per program, held in
// registers up to 16384 elements; a few programs per SM taking rows in turn and holding
// them up to 32768; a cluster of programs per row up to 131072; a few programs per SM
// reading rows in chunks wider.
#include <string>

#include <ATen/core/Tensor.h>
#include <ATen/ops/_log_softmax_ops.h>
#include <ATen/ops/_softmax_ops.h>
#include <ATen/ops/empty.h>

#include "dsls/triton/launch.h"
#include "dsls/triton/rows.h"
#include "gpu_domain.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"

namespace native_ops::kernels {

namespace {

Verdict triton_rows_apply(const at::Tensor& self, int64_t dim, bool half_to_float) {
  if (const Verdict verdict = gpu_rows_apply(self, dim, half_to_float); !verdict.accepted()) return verdict;
  return triton_rows::layout_applies(self.size(-1), {self.const_data_ptr()});
}

// Per log, dtype: the variants of lib/src/dsls/triton/rows.h's ladder.
const triton::Artifact& rows_kernel(const at::Tensor& self, bool log, int64_t width) {
  static const std::vector<const triton::Artifact*> kernels = [] {
    std::vector<const triton::Artifact*> all;
    for (const char* name : {"softmax_rows:", "log_softmax_rows:"}) {
      for (const char* dtype : triton::kDtypeKeys) {
        for (const std::string& suffix : triton_rows::key_suffixes()) {
          all.push_back(&triton::find(name + std::string(dtype) + ":" + suffix));
        }
      }
    }
    return all;
  }();
  return *kernels[((log ? 1 : 0) * 3 + triton::dtype_index(self)) * triton_rows::kVariants +
                  triton_rows::variant(width)];
}

at::Tensor rows(const at::Tensor& self, bool log) {
  at::Tensor out = at::empty(self.sizes(), self.options());
  const int32_t width = static_cast<int32_t>(self.size(-1));
  const void* in = self.const_data_ptr();
  void* y = out.mutable_data_ptr();
  const int32_t row_count = static_cast<int32_t>(self.numel() / width);
  const triton::Artifact& kernel = rows_kernel(self, log, width);
  const triton::Grid grid = triton_rows::rows_grid(kernel, row_count, width, self);
  if (triton_rows::rows_in_turn(width)) {
    triton::launch(kernel, grid, {&in, &y, &row_count, &width}, self);
  } else {
    triton::launch(kernel, grid, {&in, &y, &width}, self);
  }
  return out;
}

}  // namespace

void register_softmax_triton() {
  register_op_override<at::_ops::_softmax>("triton", c10::DispatchKey::CUDA, &triton_rows_apply,
                                           [](const at::Tensor& self, int64_t, bool) { return rows(self, false); });
  register_op_override<at::_ops::_log_softmax>("triton", c10::DispatchKey::CUDA, &triton_rows_apply,
                                               [](const at::Tensor& self, int64_t, bool) { return rows(self, true); });
}

}  // namespace native_ops::kernels
