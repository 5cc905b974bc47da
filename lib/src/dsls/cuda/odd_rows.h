#pragma once
// How the cuda row kernels hold rows that no 16-byte vector spans (an odd width, or rows
// off a vector boundary): one rule for the kernels (rows.cuh) and for the conds that
// decline where the rows it leaves an element a thread are slower than aten's.
#include <cstdint>

namespace native_ops::cuda {

/// Whether launch_rows_of_any_width holds such rows shifted (16-byte vectors, the edge ones
/// an element at a time) rather than an element a thread, as measured on the H200
/// (docs/design/cuda-rows.md, "Odd widths"): shifted, rows wider than 8192 elements, and
/// from 1024 rows of 1024 elements and 2^21 elements in all, ran 0.97-2.9x as fast; fewer
/// rows ran 0.6-0.9x (a block a row, most vectors half used), and so did rows narrower than
/// 1024 (a warp a row, at 127 wide half its lanes idle). Never for an op that reads 16-bit
/// column operands (a norm's weight, `columns_16_bit`): its shifted loads cost about what
/// the row's wide loads save (0.70-0.84x at 2049 and 8191 wide, 1.0-1.5x at 4097 and
/// 11009, 0.75-1.05x at 50257 from 256 rows, where the shifted cluster blocks spill).
/// Rows of 2^31 elements or more stay an element a thread: the shifted holders count a row's
/// columns in 32 bits. `scalar_edges`: the op's rows held shifted give their partial vectors'
/// columns one to a thread (rows.cuh's scalar_edges): those run shifted from 256 rows of
/// more than 4096 elements too (H100: 0.95-1.25x, a median 1.04x; docs/design/cuda-rows.md,
/// "Odd widths"; bench/cuda_rows_variants --few-rows).
constexpr bool hold_shifted(int64_t rows, int64_t width, bool columns_16_bit = false, bool scalar_edges = false) {
  if (columns_16_bit || width >= (int64_t{1} << 31)) return false;
  if (scalar_edges && rows >= 256 && width > 4096) return true;
  return width > 8192 || (rows >= 1024 && width >= 1024 && rows * width >= (int64_t{1} << 21));
}

}  // namespace native_ops::cuda
