#pragma once
// Where the grid had aten's multinomial at least as fast as the cuda kernel
// (docs/results/h100-sm90/multinomial.json; docs/design/sampling.md): nowhere. The kernel
// reads a row with one block, eight columns' loads in flight a thread, after aten's own
// exponential draw; aten takes a dozen launches. The grid's cells, 1 to 2048 rows of 50 to
// 262144 categories in each dtype, ran 1.32x aten or faster (1.35x and 1.71x at 8 rows of
// 262144, bf16 and float32). tests/measured_conds_test.cpp replays the grid.
#include <cstdint>

namespace native_ops::kernels {

/// Why the cuda kernel of multinomial (one sample a row) is slower than aten's (or not
/// measured) over rows of `categories` probabilities, however many rows; null where it is
/// not.
constexpr const char* cuda_multinomial_slower_than_aten(int64_t categories) {
  if (categories > 262144) return "more than 262144 categories: not measured, aten runs";
  return nullptr;
}

}  // namespace native_ops::kernels
