#pragma once
// The ladder of row widths the triton DSL's row kernels are compiled for
// (lib/src/dsls/triton/triton_common.py): one program per row holding it in registers up to 16384
// elements; then a few programs per SM taking rows in turn and holding them, up to 32768;
// then a cluster of programs per row, each holding a slice, up to 65536 (clusters of up to
// 8) and 131072 (up to 16); wider, a few programs per SM taking rows in turn and reading
// them in chunks. Each op builds these variants per dtype and flavour, keyed
// "<prefix>:<suffix>".
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "dsls/triton/launch.h"
#include "native_ops/verdict.h"

namespace native_ops::kernels::triton_rows {

/// The register-held widths: a row takes the first that holds it.
inline constexpr std::array<int64_t, 5> kRegisterBlocks = {1024, 2048, 4096, 8192, 16384};
/// The widest rows of the first variant that takes rows in turn ("32768"); wider ones are
/// split over a cluster ("cluster").
inline constexpr int64_t kInTurnWidth = 32768;
/// The columns of a row each program of a cluster holds (CLUSTER_SLICE).
inline constexpr int64_t kClusterSlice = 8192;
/// The largest clusters of "cluster" (PORTABLE_CLUSTER) and "wide_cluster" (WIDE_CLUSTER).
inline constexpr int64_t kPortableCluster = 8;
inline constexpr int64_t kWideCluster = 16;
/// The widest rows of "cluster"; wider ones are split over a "wide_cluster".
inline constexpr int64_t kClusterWidth = kClusterSlice * kPortableCluster;
/// The widest rows split over a cluster; wider ones are "chunked".
inline constexpr int64_t kWideClusterWidth = kClusterSlice * kWideCluster;
/// Variants per dtype and flavour: the register-held ones, "32768", "cluster",
/// "wide_cluster" and "chunked".
inline constexpr size_t kVariants = kRegisterBlocks.size() + 4;

/// Whether rows of `width` elements are split over a cluster of programs ("cluster" or
/// "wide_cluster").
inline bool clustered(int64_t width) { return width > kInTurnWidth && width <= kWideClusterWidth; }

/// Whether rows of `width` elements take a kernel whose programs take rows in turn ("32768"
/// or "chunked"): it is also given the row count, and a grid of a few programs per SM
/// (triton::persistent_grid()) instead of one per row.
inline bool rows_in_turn(int64_t width) { return width > kRegisterBlocks.back() && !clustered(width); }

/// The key suffixes of one op's variants, in variant()'s order: "1024" ... "16384",
/// "32768", "cluster", "wide_cluster", "chunked".
inline std::vector<std::string> key_suffixes() {
  std::vector<std::string> suffixes;
  for (int64_t block : kRegisterBlocks) suffixes.push_back(std::to_string(block));
  suffixes.push_back(std::to_string(kInTurnWidth));
  suffixes.push_back("cluster");
  suffixes.push_back("wide_cluster");
  suffixes.push_back("chunked");
  return suffixes;
}

/// The variant for rows of `width` elements, an index into key_suffixes().
inline size_t variant(int64_t width) {
  size_t index = 0;
  while (index < kRegisterBlocks.size() && kRegisterBlocks[index] < width) ++index;
  // Past the register blocks, each wider variant in turn: "32768", "cluster", "wide_cluster".
  for (int64_t widest : {kInTurnWidth, kClusterWidth, kWideClusterWidth}) {
    if (index >= kRegisterBlocks.size() && width > widest) ++index;
  }
  return index;
}

/// The grid of `kernel`, the variant for rows of `width` elements, over `rows` rows on
/// `on`'s device: a few programs per SM for the variants that take rows in turn, a cluster
/// of one program per slice for each row, or one program per row.
inline triton::Grid rows_grid(const triton::Artifact& kernel, int64_t rows, int64_t width, const at::Tensor& on) {
  if (rows_in_turn(width)) return triton::persistent_grid(kernel, rows, on);
  if (clustered(width)) {
    const auto cluster = static_cast<unsigned>((width + kClusterSlice - 1) / kClusterSlice);
    return {static_cast<unsigned>(rows) * cluster, 1, 1, cluster};
  }
  return {static_cast<unsigned>(rows)};
}

/// What the variants are compiled for: rows of a multiple of 16 elements at 16-byte
/// aligned addresses (Triton's divisibility hints), and a width that fits an int32.
inline Verdict layout_applies(int64_t width, std::initializer_list<const void*> rows) {
  bool aligned = width % 16 == 0;
  for (const void* data : rows) aligned = aligned && reinterpret_cast<uintptr_t>(data) % 16 == 0;
  if (!aligned) return decline("rows are not a multiple of 16 elements, 16-byte aligned");
  if (width > 0x7fffffff) return decline("rows longer than one launch covers");
  return true;
}

}  // namespace native_ops::kernels::triton_rows
