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

/// Why the cuda kernel of layer norm's (`centered`) or RMS norm's backward is slower than
/// aten's over `rows` rows of `width` elements of `element_size` bytes; null where it is not.
/// Few rows, each block of which writes a row of partial column sums
/// (docs/results/h200-sm90/native_layer_norm_backward.json, _fused_rms_norm_backward.json);
/// each bound lies at the geometric middle of the grid points on either side (rows 1, 8, 32,
/// 64, 256, 2048, 8192; widths 768, 2048, 4096, 5120, 8192, ...), and
/// tests/measured_conds_test.cpp replays the stored grids against it.
constexpr const char* cuda_norm_backward_slower_than_aten(int64_t rows, int64_t width, int64_t element_size,
                                                          bool centered) {
  const bool wide = width >= 1254, float32 = element_size == 4;
  if (centered) {
    if (!float32 && wide && rows < 724) return "fewer than 724 16-bit rows of 1254 or more elements: aten is faster";
    if (!float32 && wide && width < 4579 && rows < 4096) {
      return "fewer than 4096 16-bit rows of 1254 to 4578 elements: aten is faster";
    }
    if (float32 && rows < 724 && ((rows >= 128 && wide) || (rows >= 45 && width >= 6476))) {
      return "128 to 723 float32 rows of 1254 or more elements (from 45 rows of 6476): aten is faster";
    }
    return nullptr;
  }
  if (!float32 && wide && rows >= 128 && rows < 724) {
    return "128 to 723 16-bit rows of 1254 or more elements: aten is faster";
  }
  if (!float32 && wide && width < 2896 && rows < 4096) {
    return "fewer than 4096 16-bit rows of 1254 to 2895 elements: aten is faster";
  }
  if (!float32 && width >= 6476 && rows >= 45 && rows < 128) {
    return "45 to 127 16-bit rows of 6476 or more elements: aten is as fast or faster";
  }
  if (float32 && !wide && rows < 3) return "one or two float32 rows under 1254 elements: aten is faster";
  return nullptr;
}

}  // namespace native_ops::kernels
