#pragma once
// Where the grids had aten's bmm as an outer product (an inner dimension of 1: `batch` x
// `rows` x `cols` outputs) at least as fast as an override's kernel: the conds decline those
// shape classes, so that graphs without a selection table are never slower; the op
// database's samples expect the same.
#include <cstdint>

namespace native_ops::kernels {

/// Why the host C++ kernel is slower than aten's, or as fast; null where it is not. Above
/// 2^24 outputs both are bound by memory writes (docs/PERFORMANCE.md: 0.92-1.06x); below 32
/// columns over more than 1024 rows aten's GEMM writes faster (`bench --grid --op bmm
/// --device cpu`: 16 columns 0.63-0.97x over 2032-262144 rows, 1.11x over 1024; 127 columns
/// win everywhere).
constexpr const char* cpp_outer_product_slower_than_aten(int64_t batch, int64_t rows, int64_t cols) {
  if (static_cast<double>(batch) * rows * cols > (int64_t{1} << 24)) return "more than 2^24 outputs: aten is as fast";
  if (cols < 32 && batch * rows > 1024) return "more than 1024 rows of fewer than 32 columns: aten is faster";
  return nullptr;
}

/// Why the cuda kernel is slower than aten's, or as fast, on outputs of `element_size`
/// bytes; null where it is not (the H200 grid, docs/design/honest-conds.md): rows that are
/// not whole 16-byte vectors over 2^21 outputs (0.53-0.96x at 127 and 8193 columns), and one
/// row a batch entry, 16 or more entries of up to 127 columns (launch-bound: 0.93-0.98x).
constexpr const char* cuda_outer_product_slower_than_aten(int64_t batch, int64_t rows, int64_t cols,
                                                          int64_t element_size) {
  if (cols % (16 / element_size) != 0 && static_cast<double>(batch) * rows * cols >= (int64_t{1} << 21)) {
    return "over 2^21 outputs in rows that are not whole 16-byte vectors: aten is faster";
  }
  if (rows == 1 && batch >= 16 && cols <= 127) return "16 or more single rows of up to 127: aten is as fast";
  return nullptr;
}

/// Why the triton kernel is as fast as aten's or slower; null where it is not (the H200
/// grid, docs/design/honest-conds.md): float32 rows that are not whole 16-byte vectors, 2^24
/// outputs or more (0.90-0.99x at 8193 columns; a few such cells won by 1.07-1.31x are
/// declined with them).
constexpr const char* triton_outer_product_slower_than_aten(int64_t batch, int64_t rows, int64_t cols,
                                                            int64_t element_size) {
  if (element_size == 4 && cols % 4 != 0 && static_cast<double>(batch) * rows * cols >= (int64_t{1} << 24)) {
    return "float32, 2^24 outputs or more in rows that are not whole 16-byte vectors: aten is as fast";
  }
  return nullptr;
}

}  // namespace native_ops::kernels
