// _softmax and _log_softmax at CUDA over the last dimension in Triton
// (kernels/softmax/triton.py, compiled ahead of time): one row per program, held in
// registers up to 16384 elements; one program per SM taking rows in turn up to 32768;
// chunked beyond.
#include <array>
#include <string>

#include <ATen/core/Tensor.h>
#include <ATen/ops/_log_softmax_ops.h>
#include <ATen/ops/_softmax_ops.h>
#include <ATen/ops/empty.h>

#include "builtin.h"
#include "softmax/gpu_domain.h"
#include "dsls/triton_kernels.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"

namespace native_ops::kernels {

namespace {

// The row widths compiled to be held in registers (kernels/softmax/triton.py's BLOCKS and
// PERSISTENT_BLOCK).
constexpr std::array<int64_t, 5> kBlocks = {1024, 2048, 4096, 8192, 16384};
constexpr int64_t kPersistentBlock = 32768;

Verdict triton_rows_apply(const at::Tensor& self, int64_t dim, bool half_to_float) {
  if (const Verdict verdict = gpu_rows_apply(self, dim, half_to_float); !verdict.accepted()) return verdict;
  // The kernels are compiled for 16-byte aligned rows of a multiple of 16 elements.
  if (self.size(-1) % 16 != 0 || reinterpret_cast<uintptr_t>(self.const_data_ptr()) % 16 != 0) {
    return decline("rows are not a multiple of 16 elements, 16-byte aligned");
  }
  if (self.size(-1) > 0x7fffffff) return decline("rows longer than one launch covers");
  return true;
}

// Rows the persistent kernel takes.
bool persistent(int64_t width) { return width > kBlocks.back() && width <= kPersistentBlock; }

// Per log, dtype: the register-held variants in kBlocks' order, the persistent one, then
// the chunked one.
const triton::Artifact& rows_kernel(const at::Tensor& self, bool log, int64_t width) {
  static const std::vector<const triton::Artifact*> kernels = [] {
    std::vector<const triton::Artifact*> all;
    for (const char* name : {"softmax_rows:", "log_softmax_rows:"}) {
      for (const char* dtype : triton::kDtypeKeys) {
        for (int64_t block : kBlocks) all.push_back(&triton::find(name + std::string(dtype) + ":" + std::to_string(block)));
        all.push_back(&triton::find(name + std::string(dtype) + ":persistent"));
        all.push_back(&triton::find(name + std::string(dtype) + ":chunked"));
      }
    }
    return all;
  }();
  size_t block = 0;
  while (block < kBlocks.size() && kBlocks[block] < width) ++block;
  if (block == kBlocks.size() && !persistent(width)) ++block;
  return *kernels[((log ? 1 : 0) * 3 + triton::dtype_index(self)) * (kBlocks.size() + 2) + block];
}

at::Tensor rows(const at::Tensor& self, bool log) {
  at::Tensor out = at::empty(self.sizes(), self.options());
  const int32_t width = static_cast<int32_t>(self.size(-1));
  const void* in = self.const_data_ptr();
  void* y = out.mutable_data_ptr();
  const int32_t row_count = static_cast<int32_t>(self.numel() / width);
  const triton::Artifact& kernel = rows_kernel(self, log, width);
  if (persistent(width)) {
    triton::launch(kernel, triton::persistent_grid(kernel, row_count, self), {&in, &y, &row_count, &width}, self);
  } else {
    triton::launch(kernel, {static_cast<unsigned>(row_count)}, {&in, &y, &width}, self);
  }
  return out;
}

}  // namespace

void register_softmax_triton_overrides() {
  register_op_override<at::_ops::_softmax>("triton", c10::DispatchKey::CUDA, &triton_rows_apply,
                                           [](const at::Tensor& self, int64_t, bool) { return rows(self, false); });
  register_op_override<at::_ops::_log_softmax>("triton", c10::DispatchKey::CUDA, &triton_rows_apply,
                                               [](const at::Tensor& self, int64_t, bool) { return rows(self, true); });
}

}  // namespace native_ops::kernels
