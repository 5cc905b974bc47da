#pragma once
// Where the H200 grid had aten's softmax and log-softmax backward faster than the cuda
// kernel (docs/design/cuda-rows.md, "Odd widths"; docs/design/honest-conds.md): the conds
// decline those shape classes, so that graphs without a selection table (other GPUs,
// NATIVE_OPS_TUNED_TABLES=0) are never slower; the op database's samples expect the same.
#include <cstdint>

#include "dsls/cuda/odd_rows.h"

namespace native_ops::kernels {

/// Why the cuda kernel of softmax's or log-softmax's backward is slower than aten's over
/// `rows` rows of `width` elements of `element_size` bytes; null where it is not. Many 16-bit
/// rows of an odd width held an element a thread: 0.52-1.02x at 4097 wide, 2048+ rows (now
/// held shifted: 2.1-2.7x), 0.68-0.89x at 127 wide, 8192+ rows.
constexpr const char* cuda_softmax_backward_slower_than_aten(int64_t rows, int64_t width, int64_t element_size) {
  if (element_size == 2 && width % 8 != 0 && rows >= 1024 && !cuda::hold_shifted(rows, width)) {
    return "1024 or more 16-bit rows of an odd width held an element a thread: aten is faster";
  }
  return nullptr;
}

}  // namespace native_ops::kernels
