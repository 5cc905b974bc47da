#pragma once
// Where the H200 grids had aten's softmax or log-softmax at least as fast as the cuda
// kernels (docs/design/honest-conds.md; docs/results/h200-sm90/): the conds decline those
// shape classes, so that graphs without a selection table (other GPUs,
// NATIVE_OPS_TUNED_TABLES=0) are never slower; the op database's samples expect the same.
#include <cstdint>

#include "dsls/cuda/odd_rows.h"

namespace native_ops::kernels {

/// Why the cuda kernel of softmax (or, `log`, log-softmax) is slower than aten's, or as
/// fast, over `rows` rows of `width` elements of `element_size` bytes; null where it is not.
constexpr const char* cuda_softmax_slower_than_aten(int64_t rows, int64_t width, int64_t element_size, bool log) {
  if (width < 128) return "rows narrower than 128 elements: aten is as fast";
  if (!log) return nullptr;
  // Rows wider than a cluster holds (lib/src/dsls/cuda/rows.cuh) are read twice; on few of
  // them aten's log-softmax (not its softmax) was faster: 16-bit 0.87-0.97x at
  // 151936-256000 wide (then left in memory), 1-64 rows; float32 0.91-0.96x, 1-8 rows.
  constexpr int64_t kWidestRowOnChip = 262144;
  if (element_size == 2 && width > kWidestRowOnChip && rows < 128) {
    return "fewer than 128 16-bit rows wider than 262144: aten is faster";
  }
  if (element_size == 4 && width > kWidestRowOnChip && rows < 32) {
    return "fewer than 32 float32 rows wider than 262144: aten is faster";
  }
  // Few 16-bit rows of 4096-16384, a block each: aten's log-softmax is as fast (0.95-1.03x),
  // the triton kernel 1.09-1.18x faster than this one.
  if (element_size == 2 && width >= 4096 && width <= 16384 && rows < 256) {
    return "fewer than 256 16-bit rows of 4096-16384 elements: aten is as fast";
  }
  // Float32 rows not of whole vectors held an element a thread: over many rows aten's
  // log-softmax was faster (0.91-0.95x at 4097 wide, 2048-32768 rows, before those were
  // held shifted).
  if (element_size == 4 && width % 4 != 0 && rows >= 1024 &&
      !cuda::hold_shifted(rows, width, /*columns_16_bit=*/false, /*scalar_edges=*/true)) {
    return "1024 or more float32 rows of an odd width held an element a thread: aten is faster";
  }
  return nullptr;
}

}  // namespace native_ops::kernels
