#pragma once
// Where the grid had aten's multinomial at least as fast as the cuda kernel
// (docs/results/h100-sm90/multinomial.json; docs/design/sampling.md). The kernel reads a
// row with one block, after aten's own exponential draw; aten takes a dozen launches but
// spreads few wide rows over every SM, which catches up at 151936 categories and 8 rows or
// fewer (float16 0.96-1.02x), wins at 262144 (0.70-0.99x) and evens out at 64 rows of
// 262144 (16-bit 1.01x). tests/measured_conds_test.cpp replays the grid.
#include <cstdint>

namespace native_ops::kernels {

/// Why the cuda kernel of multinomial (one sample a row) is slower than aten's (or not
/// measured) over `rows` rows of `categories` probabilities, in any of its dtypes; null
/// where it is not.
constexpr const char* cuda_multinomial_slower_than_aten(int64_t rows, int64_t categories) {
  if (categories > 262144) return "more than 262144 categories: not measured, aten runs";
  if (rows < 23 && categories > 139594) return "fewer than 23 rows of more than 139594 categories: aten is as fast";
  if (rows < 128 && categories > 199572) return "fewer than 128 rows of more than 199572 categories: aten is as fast";
  return nullptr;
}

}  // namespace native_ops::kernels
