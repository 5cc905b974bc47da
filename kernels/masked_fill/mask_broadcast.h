#pragma once
// Which masks the masked_fill kernel takes: read by its cond, its features and its op
// database entry.
#include <cstdint>
#include <optional>

#include <c10/util/ArrayRef.h>

namespace native_ops::kernels {

/// A mask broadcast over an input as the kernel walks it: the input is `outer` x `repeats`
/// x `width` elements, the mask `outer` x `width`, each of its rows used for `repeats` rows
/// of the input. A causal mask [t,t] over attention scores [b,h,t,t]: 1 x bh x t^2; a
/// padding mask [b,1,t,t]: b x h x t^2; [b,1,1,t]: b x ht x t; a mask of the input's shape:
/// numel x 1 x 1 is taken as 1 x 1 x numel.
struct MaskBroadcast {
  int64_t outer = 1;
  int64_t repeats = 1;
  int64_t width = 1;
};

/// How a mask of sizes `mask` broadcasts over an input of sizes `self`: the dimensions of
/// the input (ones aside) that the mask has, then those it broadcasts over, then again
/// those it has. nullopt for a mask that broadcasts otherwise, has a size that is neither
/// the input's nor one, or has more dimensions than the input (the result would not be
/// shaped as it).
inline std::optional<MaskBroadcast> mask_broadcast(c10::IntArrayRef self, c10::IntArrayRef mask) {
  if (mask.size() > self.size()) return std::nullopt;
  const size_t missing = self.size() - mask.size();
  MaskBroadcast shape;
  enum Part { outer, repeats, width } part = outer;
  for (size_t d = 0; d < self.size(); ++d) {
    const int64_t mask_size = d < missing ? 1 : mask[d - missing];
    if (mask_size != 1 && mask_size != self[d]) return std::nullopt;
    if (self[d] == 1) continue;
    const bool has = mask_size != 1;
    if (part == outer && !has) part = repeats;
    if (part == repeats && has) part = width;
    if (part == width && !has) return std::nullopt;
    (part == outer ? shape.outer : part == repeats ? shape.repeats : shape.width) *= self[d];
  }
  if (shape.repeats == 1) shape = {1, 1, shape.outer * shape.width};
  return shape;
}

}  // namespace native_ops::kernels
