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
#include "speed.h"

namespace native_ops::kernels {

namespace {

Verdict outer_product_cuda_applies(const at::Tensor& self, const at::Tensor& mat2) {
  if (const Verdict verdict = gpu_outer_product_applies(self, mat2); !verdict.accepted()) return verdict;
  // Tiles of at least 16 rows x 32 columns, so fewer than 2^31 of them (one grid's x).
  // Divided, not multiplied: an expanded `self` may have more rows than memory holds.
  if (mat2.size(2) > (int64_t{1} << 24) || self.size(1) > (int64_t{1} << 35) / mat2.size(2)) {
    return decline("more rows x columns than one launch covers");
  }
  if (const char* slower =
          cuda_outer_product_slower_than_aten(self.size(0), self.size(1), mat2.size(2), self.element_size())) {
    return decline(slower);
  }
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
