#pragma once
// Where the H200 grid had aten's argmax at least as fast as the cuda kernel
// (docs/results/h200-sm90/argmax_grid.json; docs/design/arg-extreme.md): a block reads a
// row alone where aten splits few wide rows over many SMs, and many float32 rows of 4097 to
// 8191 leave each block few loads in flight. The conds of argmax, argmin, max.dim and
// min.dim decline those shape classes, so that graphs without a selection table are never
// slower. tests/measured_conds_test.cpp replays the stored grid against it.
#include <cstdint>

namespace native_ops::kernels {

/// Why the cuda kernel of argmax, argmin, max.dim or min.dim is slower than aten's (or not
/// measured) over `rows` rows of `width` elements of `element_size` bytes; null where it is not.
constexpr const char* cuda_arg_extreme_slower_than_aten(int64_t rows, int64_t width, int64_t element_size) {
  if (width > 262144) return "rows wider than 262144 elements: not measured, aten runs";
  if (rows < 64 && width > 131072) return "fewer than 64 rows wider than 131072: aten is faster";
  if (element_size == 4 && rows >= 8192 && width > 4096 && width < 8192) {
    return "8192 or more float32 rows of 4097 to 8191 elements: aten is as fast";
  }
  return nullptr;
}

}  // namespace native_ops::kernels
