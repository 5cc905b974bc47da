// The speed rules of the cuda conds (kernels/<op>/speed.h) against the grids they were
// drawn from (docs/results/<gpu>/: the H200's, and the H100's for ops first measured
// there): every cell where the node fired and ran slower than aten ("fires where slower")
// is declined, and few cells where it ran faster are. A rule loosened, or a grid measured
// again that shows new slow cells, fails here on any machine, GPU or not.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "kernels/argmax/speed.h"
#include "kernels/embedding_backward/speed.h"
#include "kernels/masked_fill/speed.h"
#include "kernels/multinomial/speed.h"
#include "kernels/norm/speed.h"
#include "kernels/topk/speed.h"
#include "native_ops/testing/benchmark.h"
#include "native_ops/testing/report.h"

namespace native_ops {
namespace {

using Features = std::map<std::string, int64_t>;
// The reason a rule declines a cell (features, element bytes), or null.
using Rule = std::function<const char*(const Features&, int64_t)>;

struct Replay {
  size_t slower = 0, slower_declined = 0, faster = 0, faster_declined = 0;
};

bool flagged(const BenchRow& row, const char* flag) {
  return std::find(row.flags.begin(), row.flags.end(), flag) != row.flags.end();
}

// Replays `node`'s timed cells of the stored report `file` (under docs/results) against
// `rule`. Slow: the node fired and ran slower ("fires where slower"), its decode call took
// more host time than aten's, or it was declined and its impl, timed alone, ran slower (the
// upper 95% bound of the speedup under 0.98, the same test). Faster: the lower bound above
// 1, and no flag.
Replay replay(const std::string& file, const std::string& node, const Rule& rule) {
  const BenchReport report = read_bench_report(std::string(NATIVE_OPS_SOURCE_DIR) + "/docs/results/" + file);
  Replay result;
  for (const BenchRow& row : report.rows) {
    if (row.node_id != node || !row.timed || row.features.empty()) continue;
    const Features features(row.features.begin(), row.features.end());
    const int64_t element_bytes = row.dtype == "f32" ? 4 : 2;
    const bool declined = rule(features, element_bytes) != nullptr;
    const bool decode_slower = flagged(row, "decode call slower than aten");
    if (flagged(row, "fires where slower") || decode_slower || (!row.accepted && row.speedup_high < 0.98)) {
      ++result.slower;
      result.slower_declined += declined;
      EXPECT_TRUE(declined) << node << " " << row.shape << ": " << row.speedup << "x aten"
                            << (decode_slower ? ", more host time than aten's" : "") << ", and the rule accepts it";
    } else if (row.speedup_low > 1) {
      ++result.faster;
      result.faster_declined += declined;
    }
  }
  return result;
}

// Every slow cell declined; of the faster ones, at most a tenth.
void expect_honest(const Replay& r, size_t least_slower) {
  EXPECT_GE(r.slower, least_slower) << "the stored grid lost its slow cells: read the right file?";
  EXPECT_EQ(r.slower_declined, r.slower);
  EXPECT_GT(r.faster, 0u);
  EXPECT_LE(r.faster_declined * 10, r.faster) << r.faster_declined << " of " << r.faster << " faster cells declined";
}

TEST(MeasuredConds, LayerNormBackwardDeclinesWhereTheH200GridHadAtenFaster) {
  expect_honest(replay("h200-sm90/native_layer_norm_backward.json", "native_layer_norm_backward_cuda_0",
                       [](const Features& f, int64_t bytes) {
                         return kernels::cuda_norm_backward_slower_than_aten(f.at("rows"), f.at("width"), bytes, true);
                       }),
                60);
}

TEST(MeasuredConds, RmsNormBackwardDeclinesWhereTheH200GridHadAtenFaster) {
  expect_honest(replay("h200-sm90/_fused_rms_norm_backward.json", "_fused_rms_norm_backward_cuda_0",
                       [](const Features& f, int64_t bytes) {
                         return kernels::cuda_norm_backward_slower_than_aten(f.at("rows"), f.at("width"), bytes, false);
                       }),
                20);
}

TEST(MeasuredConds, EmbeddingBackwardDeclinesWhereTheH200GridHadAtenFaster) {
  expect_honest(replay("h200-sm90/embedding_dense_backward.json", "embedding_dense_backward_cuda_0",
                       [](const Features& f, int64_t bytes) {
                         return kernels::cuda_embedding_backward_slower_than_aten(f.at("indices"), f.at("num_weights"),
                                                                                  f.at("width"), bytes);
                       }),
                100);
}

TEST(MeasuredConds, TopkDeclinesWhereTheH200GridHadAtenFaster) {
  expect_honest(replay("h200-sm90/topk.json", "topk_cuda_0",
                       [](const Features& f, int64_t bytes) {
                         return kernels::cuda_topk_slower_than_aten(f.at("rows"), f.at("width"), f.at("k"), bytes);
                       }),
                8);
}

TEST(MeasuredConds, ArgmaxDeclinesWhereTheH200GridHadAtenFaster) {
  expect_honest(replay("h200-sm90/argmax_grid.json", "argmax_cuda_0",
                       [](const Features& f, int64_t bytes) {
                         return kernels::cuda_arg_extreme_slower_than_aten(f.at("rows"), f.at("width"), bytes);
                       }),
                12);
}

TEST(MeasuredConds, MaskedFillDeclinesWhereTheH100GridHadAtenFaster) {
  for (const bool in_place : {false, true}) {
    const Replay replayed = replay(
        in_place ? "h100-sm90/masked_fill_.json" : "h100-sm90/masked_fill.json",
        in_place ? "masked_fill__Scalar_cuda_0" : "masked_fill_Scalar_cuda_0",
        [in_place](const Features& f, int64_t bytes) {
          return kernels::cuda_masked_fill_slower_than_aten({1, f.at("repeats"), f.at("mask_width")}, bytes, in_place);
        });
    expect_honest(replayed, in_place ? 23 : 0);
  }
}

TEST(MeasuredConds, MultinomialDeclinesWhereTheH100GridHadAtenFaster) {
  expect_honest(
      replay("h100-sm90/multinomial.json", "multinomial_cuda_0",
             [](const Features& f, int64_t) { return kernels::cuda_multinomial_slower_than_aten(f.at("width")); }),
      0);
}

// The bounds sit between grid points: each rule's reason names where, and a cell just
// across a bound is accepted.
TEST(MeasuredConds, BoundsLieBetweenTheGridPoints) {
  EXPECT_STREQ(kernels::cuda_norm_backward_slower_than_aten(256, 2048, 2, true),
               "128 to 723 16-bit rows of 1254 to 2895 elements: aten is faster");
  EXPECT_EQ(kernels::cuda_norm_backward_slower_than_aten(256, 768, 2, true), nullptr);
  EXPECT_NE(kernels::cuda_norm_backward_slower_than_aten(64, 768, 4, false), nullptr);
  EXPECT_EQ(kernels::cuda_norm_backward_slower_than_aten(256, 8192, 4, true), nullptr);
  EXPECT_EQ(kernels::cuda_norm_backward_slower_than_aten(2048, 5120, 2, true), nullptr);
  EXPECT_EQ(kernels::cuda_norm_backward_slower_than_aten(8192, 2048, 2, false), nullptr);
  EXPECT_EQ(kernels::cuda_embedding_backward_slower_than_aten(64, 50257, 2048, 2), nullptr);
  EXPECT_NE(kernels::cuda_embedding_backward_slower_than_aten(64, 50257, 2048, 4), nullptr);
  EXPECT_EQ(kernels::cuda_topk_slower_than_aten(4096, 4096, 256, 2), nullptr);
  EXPECT_NE(kernels::cuda_topk_slower_than_aten(4096, 4096, 1024, 2), nullptr);
  EXPECT_EQ(kernels::cuda_topk_slower_than_aten(4096, 4096, 1024, 4), nullptr);
  EXPECT_STREQ(kernels::cuda_masked_fill_slower_than_aten({1, 1, 1024}, 2, true),
               "in place, a mask of the input's shape: aten is as fast");
  EXPECT_EQ(kernels::cuda_masked_fill_slower_than_aten({1, 8, 1024}, 2, true), nullptr);
  EXPECT_EQ(kernels::cuda_masked_fill_slower_than_aten({1, 1, 1024}, 2, false), nullptr);
  EXPECT_EQ(kernels::cuda_masked_fill_slower_than_aten({1, 1, 2048 * 50257}, 4, false), nullptr);
  EXPECT_STREQ(kernels::cuda_masked_fill_slower_than_aten({1, 8, 2048 * 50257}, 2, false),
               "inputs over 1 GiB: not measured, aten runs");
  EXPECT_NE(kernels::cuda_masked_fill_slower_than_aten({8, 1, 2048 * 50257}, 2, false), nullptr);
  EXPECT_NE(kernels::cuda_masked_fill_slower_than_aten({1, 1, 2048 * 50257 + 1}, 2, false), nullptr);
  EXPECT_EQ(kernels::cuda_multinomial_slower_than_aten(262144), nullptr);
  EXPECT_STREQ(kernels::cuda_multinomial_slower_than_aten(262145),
               "more than 262144 categories: not measured, aten runs");
}

}  // namespace
}  // namespace native_ops
