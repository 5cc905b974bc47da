// bmm at CUDA when the inner dimension is 1 (a batched outer product), float32, float16
// and bfloat16, in Triton (kernels/bmm/triton.py, compiled ahead of time): a tile of the
// output per program.
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/bmm_ops.h>
#include <ATen/ops/empty.h>

#include "dsls/triton/launch.h"
#include "gpu_domain.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

constexpr int64_t kNarrowCols = 64;  // up to this width, the 64 x 64 tiles; wider, 16 x 256
constexpr int64_t kMaxGridYZ = 65535;

Verdict outer_product_triton_applies(const at::Tensor& self, const at::Tensor& mat2) {
  if (const Verdict verdict = gpu_outer_product_applies(self, mat2); !verdict.accepted()) return verdict;
  const int64_t cols = mat2.size(2);
  const int64_t tile_cols = cols <= kNarrowCols ? 64 : 256;
  if (self.size(0) > kMaxGridYZ || (cols + tile_cols - 1) / tile_cols > kMaxGridYZ || self.size(1) > 0x7fffffff ||
      self.size(1) * cols > 0x7fffffff) {
    return decline("more batches, rows or columns than one launch covers");
  }
  if (const char* slower =
          triton_outer_product_slower_than_aten(self.size(0), self.size(1), cols, self.element_size())) {
    return decline(slower);
  }
  return true;
}

// The 12 variants of kernels/bmm/triton.py, resolved once: dtype x width x layout.
const triton::Artifact& outer_product_kernel(const at::Tensor& self, bool narrow, bool contiguous) {
  static const std::vector<const triton::Artifact*> kernels = [] {
    std::vector<const triton::Artifact*> all;
    for (const char* dtype : triton::kDtypeKeys) {
      for (const char* width : {"narrow", "wide"}) {
        for (const char* layout : {"contiguous", "strided"}) {
          all.push_back(&triton::find(std::string("outer_product:") + dtype + ":" + width + ":" + layout));
        }
      }
    }
    return all;
  }();
  return *kernels[(triton::dtype_index(self) * 2 + (narrow ? 0 : 1)) * 2 + (contiguous ? 0 : 1)];
}

at::Tensor outer_product_triton(const at::Tensor& self, const at::Tensor& mat2) {
  const int64_t batch = self.size(0);
  const int32_t rows = static_cast<int32_t>(self.size(1)), cols = static_cast<int32_t>(mat2.size(2));
  at::Tensor out = at::empty({batch, rows, cols}, self.options());
  const bool narrow = cols <= kNarrowCols;
  // The contiguous variant assumes unit-stride rows of mat2, and columns and mat2's batch
  // stride divisible by 16 and 16-byte aligned pointers (Triton's divisibility hints,
  // which let it load and store 16-byte vectors).
  const bool contiguous = mat2.stride(2) == 1 && cols % 16 == 0 && mat2.stride(0) % 16 == 0 &&
                          reinterpret_cast<uintptr_t>(mat2.const_data_ptr()) % 16 == 0;
  const triton::Artifact& kernel = outer_product_kernel(self, narrow, contiguous);
  const int64_t tile_rows = narrow ? 64 : 16, tile_cols = narrow ? 64 : 256;
  const triton::Grid grid{static_cast<unsigned>((rows + tile_rows - 1) / tile_rows),
                          static_cast<unsigned>((cols + tile_cols - 1) / tile_cols), static_cast<unsigned>(batch)};
  const void* a = self.const_data_ptr();
  const void* m = mat2.const_data_ptr();
  void* o = out.mutable_data_ptr();
  const int64_t a_batch = self.stride(0), a_row = self.stride(1), m_batch = mat2.stride(0), m_col = mat2.stride(2);
  if (contiguous) {
    triton::launch(kernel, grid, {&a, &m, &o, &rows, &cols, &a_batch, &a_row, &m_batch}, self);
  } else {
    triton::launch(kernel, grid, {&a, &m, &o, &rows, &cols, &a_batch, &a_row, &m_batch, &m_col}, self);
  }
  return out;
}

}  // namespace

void register_bmm_triton() {
  register_op_override<at::_ops::bmm>("triton", c10::DispatchKey::CUDA, &outer_product_triton_applies,
                                      &outer_product_triton);
}

}  // namespace native_ops::kernels
