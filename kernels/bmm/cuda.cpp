// bmm at CUDA when the inner dimension is 1 (a batched outer product), float32, float16
// and bfloat16: one kernel that writes the output at the memory bandwidth
// (kernels/bmm/cuda_kernels.cu), where cuBLAS runs a general GEMM at a quarter of it.
#include <ATen/core/Tensor.h>
#include <ATen/ops/bmm_ops.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>

#include "cuda_abi.h"
#include "dsls/cuda/kernels_library.h"
#include "gpu_domain.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"

namespace native_ops::kernels {

namespace {

constexpr double kManyOutputs = 1 << 21;

Verdict outer_product_cuda_applies(const at::Tensor& self, const at::Tensor& mat2) {
  if (const Verdict verdict = gpu_outer_product_applies(self, mat2); !verdict.accepted()) return verdict;
  // Tiles of at least 16 rows x 32 columns, so fewer than 2^31 of them (one grid's x).
  // Divided, not multiplied: an expanded `self` may have more rows than memory holds.
  if (mat2.size(2) > (int64_t{1} << 24) || self.size(1) > (int64_t{1} << 35) / mat2.size(2)) {
    return decline("more rows x columns than one launch covers");
  }
  // Where the H200 grid has aten at least as fast (docs/design/honest-conds.md): rows of a
  // width that is not whole 16-byte vectors, over 2^21 outputs (0.53-0.96x at 127 and 8193
  // columns); and one row a batch entry, 16 or more entries of up to 127 columns
  // (launch-bound: 0.93-0.98x).
  const int64_t batch = self.size(0), rows = self.size(1), cols = mat2.size(2);
  if (!rows_of_whole_vectors(cols, self.element_size()) && static_cast<double>(batch) * rows * cols >= kManyOutputs) {
    return decline("over 2^21 outputs in rows that are not whole 16-byte vectors: aten is faster");
  }
  if (rows == 1 && batch >= 16 && cols <= 127) return decline("16 or more single rows of up to 127: aten is as fast");
  return true;
}

at::Tensor outer_product_cuda(const at::Tensor& self, const at::Tensor& mat2) {
  const c10::DeviceGuard device(self.device());
  const int64_t batch = self.size(0), rows = self.size(1), cols = mat2.size(2);
  at::Tensor out = at::empty({batch, rows, cols}, self.options());
  static const auto outer_product = cuda::kernel<NativeOpsOuterProductFn>(NATIVE_OPS_OUTER_PRODUCT_SYMBOL);
  cuda::check(outer_product(cuda::dtype_code(self), self.const_data_ptr(), self.stride(0), self.stride(1),
                            mat2.const_data_ptr(), mat2.stride(0), mat2.stride(2), out.mutable_data_ptr(), batch, rows,
                            cols, cuda::current_stream(self)),
              "outer_product");
  return out;
}

}  // namespace

void register_bmm_cuda() {
  register_op_override<at::_ops::bmm>("cuda", c10::DispatchKey::CUDA, &outer_product_cuda_applies, &outer_product_cuda);
}

}  // namespace native_ops::kernels
