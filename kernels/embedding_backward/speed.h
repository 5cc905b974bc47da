#pragma once
// Where the H200 grid had aten's embedding backward faster than the cuda kernel
// (docs/results/h200-sm90/embedding_dense_backward.json, measured when the kernel sorted
// with at::sort): few indices (the kernel sorts them, then writes every weight row), and
// narrow rows into large vocabularies. The cond
// declines those shape classes, so that graphs without a selection table (other GPUs,
// NATIVE_OPS_TUNED_TABLES=0) are never slower; each bound lies at the geometric middle of
// the grid points on either side (indices 1, 64, 2048, 16384, 65536; weights 1000, 32000,
// 50257, 128256, 151936; widths 64, 768, 2048, 4096). tests/measured_conds_test.cpp replays
// the stored grid against it.
#include <cstdint>

namespace native_ops::kernels {

/// Why the cuda kernel of embedding_dense_backward is slower than aten's for `indices`
/// indices into `num_weights` rows of `width` elements of `element_size` bytes; null where
/// it is not.
constexpr const char* cuda_embedding_backward_slower_than_aten(int64_t indices, int64_t num_weights, int64_t width,
                                                               int64_t element_size) {
  if (indices < 362) {  // a decode step's few: aten is faster but for 16-bit rows into a vocabulary
    if (element_size == 4 || num_weights < 5657 || width < 222) {
      return "fewer than 362 indices, float32 or into under 5657 weights or of rows under 222 elements: aten is "
             "faster";
    }
    if (width < 1254 && (indices >= 8 || num_weights < 40102)) {
      return "8 to 361 indices of rows under 1254 elements (fewer into under 40102 weights): aten is faster";
    }
    if (width < 2896 && indices >= 8 && num_weights < 40102) {
      return "8 to 361 indices of rows under 2896 elements into under 40102 weights: aten is faster";
    }
  }
  if (width < 222 && (num_weights >= 80286 || (indices < 5793 && num_weights >= 40102))) {
    return "rows under 222 elements into 80286 or more weights (40102 from fewer than 5793 indices): aten is faster";
  }
  if (element_size == 4 && indices < 5793 && num_weights >= 80286 && width >= 2896) {
    return "fewer than 5793 indices into 80286 or more float32 rows of 2896 or more elements: aten is faster";
  }
  return nullptr;
}

}  // namespace native_ops::kernels
