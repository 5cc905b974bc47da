// _softmax and _log_softmax at CUDA over the last dimension of contiguous float32, float16
// and bfloat16 tensors: one block per row, one DRAM read and one write per element
// (kernels/softmax/cuda_kernels.cu).
#include <ATen/core/Tensor.h>
#include <ATen/ops/_log_softmax_ops.h>
#include <ATen/ops/_softmax_ops.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>

#include "cuda_abi.h"
#include "dsls/cuda/kernels_library.h"
#include "dsls/cuda/odd_rows.h"
#include "gpu_domain.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"

namespace native_ops::kernels {

namespace {

constexpr int64_t kNarrowestRow = 128;        // narrower: aten is as fast
constexpr int64_t kWidestRowOnChip = 262144;  // wider rows are left in memory (lib/src/dsls/cuda/rows.cuh)

at::Tensor rows(const at::Tensor& self, bool log) {
  const c10::DeviceGuard device(self.device());
  at::Tensor out = at::empty(self.sizes(), self.options());
  const int64_t width = self.size(-1);
  static const auto softmax_rows = cuda::kernel<NativeOpsSoftmaxRowsFn>(NATIVE_OPS_SOFTMAX_ROWS_SYMBOL);
  cuda::check(softmax_rows(cuda::dtype_code(self), log ? 1 : 0, self.const_data_ptr(), out.mutable_data_ptr(),
                           self.numel() / width, width, cuda::current_stream(self)),
              log ? "log_softmax_rows" : "softmax_rows");
  return out;
}

// The cuda kernels decline the shape classes where the H200 grid has aten at least as fast
// (docs/design/honest-conds.md; docs/results/h200-sm90/), so that a GPU without a tuned
// table is not made slower either.
Verdict softmax_apply(const at::Tensor& self, int64_t dim, bool half_to_float) {
  const Verdict gpu = gpu_rows_apply(self, dim, half_to_float);
  if (!gpu.accepted()) return gpu;
  if (self.size(-1) < kNarrowestRow) return decline("rows narrower than 128 elements: aten is as fast");
  return true;
}

Verdict log_softmax_apply(const at::Tensor& self, int64_t dim, bool half_to_float) {
  const Verdict softmax = softmax_apply(self, dim, half_to_float);
  if (!softmax.accepted()) return softmax;
  const int64_t width = self.size(-1), rows = self.numel() / width;
  // Rows wider than a cluster holds are read twice; on few of them aten's log-softmax (not
  // its softmax) was faster: 16-bit 0.87-0.97x at 151936-256000 wide (then left in memory),
  // 1-64 rows; float32 0.91-0.96x, 1-8 rows.
  if (self.element_size() == 2 && width > kWidestRowOnChip && rows < 128) {
    return decline("fewer than 128 16-bit rows wider than 262144: aten is faster");
  }
  if (self.element_size() == 4 && width > kWidestRowOnChip && rows < 32) {
    return decline("fewer than 32 float32 rows wider than 262144: aten is faster");
  }
  // Few 16-bit rows of 4096-16384, a block each: aten's log-softmax is as fast (0.95-1.03x),
  // the triton kernel 1.09-1.18x faster than this one.
  if (self.element_size() == 2 && width >= 4096 && width <= 16384 && rows < 256) {
    return decline("fewer than 256 16-bit rows of 4096-16384 elements: aten is as fast");
  }
  // Float32 rows not of whole vectors held an element a thread: over many rows aten's
  // log-softmax was faster (0.91-0.95x at 4097 wide, 2048-32768 rows, before those were
  // held shifted).
  if (self.scalar_type() == at::kFloat && width % 4 != 0 && rows >= 1024 && !cuda::hold_shifted(rows, width)) {
    return decline("1024 or more float32 rows of an odd width held an element a thread: aten is faster");
  }
  return true;
}

}  // namespace

void register_softmax_cuda() {
  register_op_override<at::_ops::_softmax>("cuda", c10::DispatchKey::CUDA, &softmax_apply,
                                           [](const at::Tensor& self, int64_t, bool) { return rows(self, false); });
  register_op_override<at::_ops::_log_softmax>("cuda", c10::DispatchKey::CUDA, &log_softmax_apply,
                                               [](const at::Tensor& self, int64_t, bool) { return rows(self, true); });
}

}  // namespace native_ops::kernels
