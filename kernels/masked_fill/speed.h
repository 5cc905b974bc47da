#pragma once
// Where the grid had aten's masked_fill at least as fast as the cuda kernel
// (docs/results/h100-sm90/masked_fill.json and masked_fill_.json;
// docs/design/masked-fill.md): in place with a mask of the input's own shape, aten's
// elementwise kernel reads and writes what the cuda kernel does, and launches sooner. Out
// of place the kernel was faster on every cell (1.30-3.36x: aten clones, then fills). The
// grid's cells stop at masks of 102926336 elements ([2048,50257] whole) and 4 GiB moved.
// tests/measured_conds_test.cpp replays the grids.
#include <cstdint>

#include "mask_broadcast.h"

namespace native_ops::kernels {

/// Why the cuda kernel of masked_fill.Scalar (or masked_fill_.Scalar, `in_place`) is slower
/// than aten's for an input of `element_bytes` an element under a mask broadcast as
/// `shape` (mask_broadcast.h); null where it is not.
constexpr const char* cuda_masked_fill_slower_than_aten(const MaskBroadcast& shape, int64_t element_bytes,
                                                        bool in_place) {
  if (shape.width > 102926336) return "mask rows wider than 102926336 elements: not measured, aten runs";
  if (shape.outer * shape.repeats * shape.width * element_bytes > (int64_t{1} << 30)) {
    return "inputs over 1 GiB: not measured, aten runs";
  }
  if (in_place && shape.repeats == 1) return "in place, a mask of the input's shape: aten is as fast";
  return nullptr;
}

}  // namespace native_ops::kernels
