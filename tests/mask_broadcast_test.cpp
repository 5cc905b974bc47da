// How masked_fill's cuda kernel walks a mask broadcast over its input
// (kernels/masked_fill/mask_broadcast.h): the masks models pass, and the ones it leaves to
// aten.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "kernels/masked_fill/mask_broadcast.h"

namespace native_ops::kernels {
namespace {

// outer x repeats x width, or {-1, -1, -1} where the kernel does not take the mask.
std::vector<int64_t> walk(std::vector<int64_t> self, std::vector<int64_t> mask) {
  const std::optional<MaskBroadcast> shape = mask_broadcast(self, mask);
  if (!shape.has_value()) return {-1, -1, -1};
  return {shape->outer, shape->repeats, shape->width};
}

TEST(MaskBroadcast, AttentionMasksRepeatOverBatchAndHeads) {
  EXPECT_EQ(walk({4, 16, 1024, 1024}, {1024, 1024}), (std::vector<int64_t>{1, 64, 1 << 20}));  // causal
  EXPECT_EQ(walk({4, 16, 1024, 1024}, {1, 1, 1024, 1024}), (std::vector<int64_t>{1, 64, 1 << 20}));
  EXPECT_EQ(walk({4, 16, 512, 512}, {4, 1, 512, 512}), (std::vector<int64_t>{4, 16, 512 * 512}));  // padding
  EXPECT_EQ(walk({4, 16, 512, 512}, {4, 1, 1, 512}), (std::vector<int64_t>{4, 16 * 512, 512}));
  EXPECT_EQ(walk({64, 32, 1, 4096}, {4096}), (std::vector<int64_t>{1, 64 * 32, 4096}));  // decode rows
}

TEST(MaskBroadcast, AMaskOfTheInputsShapeIsOneRow) {
  EXPECT_EQ(walk({2, 3, 5}, {2, 3, 5}), (std::vector<int64_t>{1, 1, 30}));
  EXPECT_EQ(walk({2, 1, 5}, {2, 1, 5}), (std::vector<int64_t>{1, 1, 10}));
  EXPECT_EQ(walk({1, 1}, {1}), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(walk({}, {}), (std::vector<int64_t>{1, 1, 1}));
}

TEST(MaskBroadcast, OnesOfTheInputAreSkipped) {
  EXPECT_EQ(walk({8, 1, 64}, {64}), (std::vector<int64_t>{1, 8, 64}));
  EXPECT_EQ(walk({8, 1, 64}, {8, 1, 1}), (std::vector<int64_t>{8, 64, 1}));  // a value a row
}

TEST(MaskBroadcast, OtherMasksAreLeftToAten) {
  EXPECT_FALSE(mask_broadcast({4, 64}, {1, 4, 64}).has_value());            // the result gains a dimension
  EXPECT_FALSE(mask_broadcast({1, 64}, {4, 64}).has_value());               // the input broadcasts
  EXPECT_FALSE(mask_broadcast({4, 64}, {4, 3}).has_value());                // sizes that do not broadcast
  EXPECT_FALSE(mask_broadcast({4, 8, 64, 16}, {4, 1, 64, 1}).has_value());  // two runs broadcast over
  EXPECT_FALSE(mask_broadcast({8, 4, 64}, {1, 4, 1}).has_value());
}

}  // namespace
}  // namespace native_ops::kernels
