#pragma once
// Where the H200 grids had aten's norms faster than the cuda kernels: the conds decline
// those shape classes, so that graphs without a selection table (other GPUs,
// NATIVE_OPS_TUNED_TABLES=0) are never slower; the op database's samples expect the same.
#include <cstdint>

namespace native_ops::kernels {

/// Why the cuda kernel of RMS norm is slower than aten's over `rows` rows of `width`
/// elements of `element_size` bytes; null where it is not. Between the block-a-row and the
/// warp-a-row kernels too few loads are in flight (H200: 16-bit 0.90-1.02x, float32
/// 0.83-1.10x, mostly below 1; a sweep of rows x widths, docs/design/honest-conds.md).
constexpr const char* cuda_rms_norm_slower_than_aten(int64_t rows, int64_t width, int64_t element_size) {
  if (element_size == 2 && rows >= 1024 && rows < 3072 && width >= 1024 && width <= 2048) {
    return "1024-3071 16-bit rows of 1024-2048 elements: aten is faster";
  }
  if (element_size == 4 && rows >= 512 && rows < 3072 && width >= 768 && width <= 4096) {
    return "512-3071 float32 rows of 768-4096 elements: aten is faster";
  }
  return nullptr;
}

/// Whether the cuda kernel of layer norm's (`centered`) or RMS norm's backward takes the
/// weight's and bias's gradients in a second pass over grad_out and the input (one partial
/// row a chunk of rows) rather than in the rows kernel (one partial row a block): where
/// rows are few for their width, the blocks' partials cost more than reading the rows again.
/// Measured on the H200 with each path forced over the grid: float32 with the column sums
/// in registers (docs/design/honest-conds.md), 16-bit with them in shared memory
/// (docs/design/backward-and-topk.md, docs/design/data/norm-backward-shared-sums-h200.json).
/// float32 RMS norm's partials are one plane of four bytes a column, never worth a pass.
constexpr bool cuda_norm_backward_columns_apart(int64_t rows, int64_t width, int64_t element_size, bool centered) {
  if (element_size == 4) return centered && width >= 2896 && rows < 724;
  if (centered) return rows < 724 ? width >= 2896 : rows < 4096 && width < 2896;
  return rows >= 128 && rows < 724 && width >= 6476;
}

/// Why the cuda kernel of layer norm's (`centered`) or RMS norm's backward is slower than
/// aten's over `rows` rows of `width` elements of `element_size` bytes; null where it is not.
/// Decode-sized calls spend more host time than aten's (the outputs' and the workspace's
/// allocations, two or three launches: 1-7 us more), which such calls wait on; and between
/// 128 and 723 rows of 2048-5120 elements neither way of taking the column gradients (above)
/// gains back its partials or its second read (docs/results/h200-sm90/
/// native_layer_norm_backward.json, _fused_rms_norm_backward.json). Each bound lies at the
/// geometric middle of the grid points on either side (rows 1, 8, 32, 64, 256, 2048, 8192;
/// widths 768, 2048, 4096, 5120, 8192, ...), and tests/measured_conds_test.cpp replays the
/// stored grids against it.
constexpr const char* cuda_norm_backward_slower_than_aten(int64_t rows, int64_t width, int64_t element_size,
                                                          bool centered) {
  // Where aten's RMS norm backward takes longer on the GPU than this one's host time, the
  // few rows are this kernel's.
  const bool gpu_bound = !centered && element_size != 4 && rows < 16 && width >= 12562;
  if (rows < 128 && !gpu_bound) return "fewer than 128 rows: a decode-sized call, whose host time exceeds aten's";
  if (rows >= 724 || width < 1254) return nullptr;
  if (element_size != 4 && width < 2896) return "128 to 723 16-bit rows of 1254 to 2895 elements: aten is faster";
  if (element_size == 4 && centered && width < 6476) {
    return "128 to 723 float32 rows of 1254 to 6475 elements: aten is faster";
  }
  return nullptr;
}

}  // namespace native_ops::kernels
