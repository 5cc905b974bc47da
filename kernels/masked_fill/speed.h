#pragma once
// Where the grid had aten's masked_fill at least as fast as the cuda kernel
// (docs/results/h100-sm90/masked_fill.json and masked_fill_.json;
// docs/design/masked-fill.md): in place with a mask of the input's own shape, aten's
// elementwise kernel reads and writes what the cuda kernel does, and launches sooner. Out
// of place the kernel was faster on every cell (1.2-3.4x: aten clones, then fills).
// tests/measured_conds_test.cpp replays the grids.
#include <cstdint>

namespace native_ops::kernels {

/// Why the cuda kernel of masked_fill.Scalar (or masked_fill_.Scalar, `in_place`) is slower
/// than aten's for mask rows of `mask_width` elements each used for `repeats` input rows
/// (mask_broadcast.h), in any of its dtypes; null where it is not.
constexpr const char* cuda_masked_fill_slower_than_aten(int64_t repeats, int64_t mask_width, bool in_place) {
  if (mask_width > 4194304) return "mask rows wider than 4194304 elements: not measured, aten runs";
  if (repeats * mask_width > (int64_t{1} << 28)) return "more than 2^28 elements: not measured, aten runs";
  if (in_place && repeats == 1) return "in place, a mask of the input's shape: aten is as fast";
  return nullptr;
}

}  // namespace native_ops::kernels
