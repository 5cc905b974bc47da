#pragma once
// Where the H200 grid had aten's topk faster than the cuda kernel
// (docs/results/h200-sm90/topk.json): the largest k of 16-bit rows, over few very wide rows
// or many narrow ones. The cond declines
// those shape classes, so that graphs without a selection table (other GPUs,
// NATIVE_OPS_TUNED_TABLES=0) are never slower; each bound lies at the geometric middle of
// the grid points on either side (k 1, 50, 256, 1024; rows 1, 8, 64, 512, 4096; widths
// 4096, 32000, 50257, 128256, 262144). tests/measured_conds_test.cpp replays the stored grid
// against it.
#include <cstdint>

namespace native_ops::kernels {

/// Why the cuda kernel of topk is slower than aten's selecting `k` of each of `rows` rows
/// of `width` elements of `element_size` bytes; null where it is not.
constexpr const char* cuda_topk_slower_than_aten(int64_t rows, int64_t width, int64_t k, int64_t element_size) {
  if (element_size != 2 || k <= 512) return nullptr;
  if (rows < 23 && width >= 80286) return "k above 512 of fewer than 23 16-bit rows of 80286 or more: aten is faster";
  if (rows >= 1448 && width < 11449) return "k above 512 of 1448 or more 16-bit rows under 11449: aten is faster";
  return nullptr;
}

}  // namespace native_ops::kernels
