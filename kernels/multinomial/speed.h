#pragma once
// Where the grid had aten's multinomial at least as fast as the cuda kernel
// (docs/results/h100-sm90/multinomial.json; docs/design/sampling.md). The kernel reads a
// row with one block, eight columns' loads in flight a thread, after aten's own
// exponential draw; aten takes a dozen launches but spreads few wide rows over every SM.
// A float32 row alone is bound by what one SM's block pulls: at 262144 categories aten
// wins with 1 and 8 rows (0.80x, 0.70x), evens out near 24 rows, and loses at 64 (1.53x);
// 16-bit rows, half the bytes, stay 1.39x faster or more. tests/measured_conds_test.cpp
// replays the grid.
#include <cstdint>

namespace native_ops::kernels {

/// Why the cuda kernel of multinomial (one sample a row) is slower than aten's (or not
/// measured) over `rows` rows of `categories` probabilities of `element_bytes` each; null
/// where it is not.
constexpr const char* cuda_multinomial_slower_than_aten(int64_t rows, int64_t categories, int64_t element_bytes) {
  if (categories > 262144) return "more than 262144 categories: not measured, aten runs";
  if (element_bytes == 4 && rows < 24 && categories > 151936) {
    return "fewer than 24 float32 rows of more than 151936 categories: aten is as fast";
  }
  return nullptr;
}

}  // namespace native_ops::kernels
