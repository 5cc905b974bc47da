#pragma once
// Tensors for op database samples, the way torch.testing.make_tensor makes them: seeded,
// in a range that suits the dtype, and in the memory layouts that break kernels.

#include <cstdint>
#include <string>
#include <string_view>
#include "native_ops/export.h"
#include "native_ops/names.h"

#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

namespace native_ops::samples {

/// How a sample tensor is laid out in memory. Its sizes are always those asked for.
enum class Layout {
  contiguous,
  transposed,   // the last two dimensions swapped in memory (a .mT() of a contiguous tensor)
  step_sliced,  // every other element of a twice-as-long last dimension
  expanded,     // the first dimension has stride 0 (all of it one row, broadcast)
};

/// How make_tensor() fills a tensor.
struct Fill {
  Layout layout = Layout::contiguous;
  uint64_t seed = 0;  // same seed, same values, every run
  double low = -9;    // values are uniform in [low, high); bool tensors are 0/1
  double high = 9;
  /// Floating only: also write +-this magnitude, and (with `inf`) +-inf and (with `nan`)
  /// NaN, each once, at spread-out positions (as many as the tensor has elements).
  double extreme_magnitude = 0;
  bool inf = true;
  bool nan = true;
};

/// A tensor of `sizes` on `device`, filled and laid out as `fill` says.
NATIVE_OPS_API at::Tensor make_tensor(c10::IntArrayRef sizes, c10::ScalarType dtype, c10::Device device,
                                      const Fill& fill = {});

/// A magnitude near the top of `dtype`'s range (6e4 for float16, 1e38 for float32 and
/// bfloat16, 1e300 for float64): sums and products of it overflow.
NATIVE_OPS_API double large_magnitude(c10::ScalarType dtype);

/// The default fill in `layout`.
NATIVE_OPS_API Fill laid_out(Layout layout);
/// The default fill with +-inf, NaN and +-large_magnitude(dtype) written in.
NATIVE_OPS_API Fill with_extremes(c10::ScalarType dtype);

/// "f32[3,17,1]"; a non-contiguous one adds its strides: "f32[4,5] strides [1,4]".
NATIVE_OPS_API std::string describe(const at::Tensor& tensor);

}  // namespace native_ops::samples
