// topk at CUDA over the last dimension of contiguous float32, float16 and bfloat16 tensors,
// k up to NATIVE_OPS_TOPK_MAX_K: a block a row (a slice of one, or a cluster of blocks, where
// rows are few) selects from a sample's threshold, sorted whether asked or not
// (kernels/topk/cuda_kernels.cu).
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/topk_ops.h>
#include <c10/core/DeviceGuard.h>

#include "cuda_abi.h"
#include "dsls/cuda/kernels_library.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

Verdict topk_applies(const at::Tensor& self, const c10::SymInt& k, int64_t dim, bool, bool) {
  const auto dtype = self.scalar_type();
  if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16)
    return decline("dtype is not float32, float16 or bfloat16");
  if (self.dim() == 0) return decline("a 0-dim tensor");
  if (dim != -1 && dim != self.dim() - 1) return decline("not over the last dimension");
  if (self.numel() == 0) return decline("empty input");
  if (!self.is_contiguous() || self.is_neg()) return decline("not contiguous");
  const auto count = k.maybe_as_int();
  if (!count.has_value()) return decline("a symbolic k");
  if (*count < 1) return decline("k is 0: nothing to select");
  const int64_t width = self.size(-1);
  if (*count > width) return decline("k is larger than the row (aten reports the error)");
  static_assert(NATIVE_OPS_TOPK_MAX_K == 1024, "the reason below names the limit");
  if (*count > NATIVE_OPS_TOPK_MAX_K) return decline("k above 1024");
  if (width >= (int64_t{1} << 31)) return decline("rows of 2^31 or more elements");
  if (self.numel() / width > 0x7fffffff) return decline("more rows than one launch covers");
  if (const char* slower = cuda_topk_slower_than_aten(self.numel() / width, width, *count, self.element_size())) {
    return decline(slower);
  }
  return true;
}

std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& self, c10::SymInt k, int64_t, bool largest, bool) {
  const c10::DeviceGuard device(self.device());
  const int64_t count = k.expect_int();
  std::vector<int64_t> sizes = self.sizes().vec();
  sizes.back() = count;
  at::Tensor values = at::empty(sizes, self.options());
  at::Tensor indices = at::empty(sizes, self.options().dtype(at::kLong));
  const int64_t width = self.size(-1);
  const int64_t rows = self.numel() / width;
  const int dtype = cuda::dtype_code(self);
  static const auto topk_workspace = cuda::kernel<NativeOpsTopkWorkspaceFn>(NATIVE_OPS_TOPK_WORKSPACE_SYMBOL);
  static const auto topk_rows = cuda::kernel<NativeOpsTopkRowsFn>(NATIVE_OPS_TOPK_ROWS_SYMBOL);
  int64_t bytes = 0;
  cuda::check(topk_workspace(dtype, largest ? 1 : 0, rows, width, count, &bytes), "topk_workspace");
  at::Tensor workspace;
  if (bytes > 0) workspace = at::empty({bytes}, self.options().dtype(at::kByte));
  cuda::check(
      topk_rows(dtype, largest ? 1 : 0, self.const_data_ptr(), values.mutable_data_ptr(),
                indices.mutable_data_ptr<int64_t>(), rows, width, count,
                workspace.defined() ? workspace.mutable_data_ptr() : nullptr, bytes, cuda::current_stream(self)),
      "topk_rows");
  return {std::move(values), std::move(indices)};
}

}  // namespace

void register_topk_cuda() {
  register_op_override<at::_ops::topk>("cuda", c10::DispatchKey::CUDA, &topk_applies, &topk);
}

}  // namespace native_ops::kernels
