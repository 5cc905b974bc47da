// Sample tensors: seeded values, special values, and the layouts that break kernels.
#include "native_ops/testing/samples.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/randint.h>

#include "native_ops/error.h"

namespace native_ops::samples {

namespace {

// The sizes of the buffer `layout` is taken from, and the view that gives `sizes`.
std::vector<int64_t> base_sizes(c10::IntArrayRef sizes, Layout layout) {
  std::vector<int64_t> base(sizes.begin(), sizes.end());
  const size_t dims = base.size();
  switch (layout) {
    case Layout::contiguous: break;
    case Layout::transposed:
      if (dims >= 2) std::swap(base[dims - 1], base[dims - 2]);
      break;
    case Layout::step_sliced:
      if (dims >= 1) base[dims - 1] *= 2;
      break;
    case Layout::expanded:
      if (dims >= 1) base[0] = std::min<int64_t>(base[0], 1);
      break;
  }
  return base;
}

at::Tensor view_as_layout(const at::Tensor& base, c10::IntArrayRef sizes, Layout layout) {
  const int64_t dims = base.dim();
  switch (layout) {
    case Layout::contiguous: return base;
    case Layout::transposed: return dims >= 2 ? base.transpose(-1, -2) : base;
    case Layout::step_sliced: return dims >= 1 ? base.slice(-1, 0, c10::nullopt, 2) : base;
    case Layout::expanded: return dims >= 1 ? base.expand(sizes) : base;
  }
  return base;
}

void write_extremes(at::Tensor& flat, const Fill& fill) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> specials = {fill.extreme_magnitude, -fill.extreme_magnitude};
  if (fill.inf) specials.insert(specials.begin(), {inf, -inf});
  if (fill.nan) specials.push_back(std::numeric_limits<double>::quiet_NaN());
  const int64_t n = flat.numel();
  const int64_t count = std::min<int64_t>(n, static_cast<int64_t>(specials.size()));
  for (int64_t i = 0; i < count; ++i) {
    // Spread out, so that different vector lanes and row positions see them.
    flat[(i * n) / count + (n / count) / 2].fill_(specials[i]);
  }
}

}  // namespace

at::Tensor make_tensor(c10::IntArrayRef sizes, c10::ScalarType dtype, c10::Device device, const Fill& fill) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(fill.seed);
  const std::vector<int64_t> shape = base_sizes(sizes, fill.layout);
  at::Tensor base;
  if (dtype == at::kBool) {
    base = at::randint(0, 2, shape, generator, at::TensorOptions().dtype(at::kBool));
  } else if (at::isIntegralType(dtype, /*includeBool=*/false)) {
    base = at::randint(static_cast<int64_t>(fill.low), static_cast<int64_t>(fill.high), shape, generator,
                       at::TensorOptions().dtype(dtype));
  } else {
    base = at::empty(shape, at::TensorOptions().dtype(at::kDouble)).uniform_(fill.low, fill.high, generator);
    if (fill.extreme_magnitude != 0 && base.numel() > 0) {
      at::Tensor flat = base.view({-1});
      write_extremes(flat, fill);
    }
    base = base.to(dtype);
  }
  return view_as_layout(base.to(device), sizes, fill.layout);
}

double large_magnitude(c10::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf: return 6e4;
    case at::kDouble: return 1e300;
    default: return 1e38;
  }
}

Fill laid_out(Layout layout) {
  Fill fill;
  fill.layout = layout;
  return fill;
}

Fill with_extremes(c10::ScalarType dtype) {
  Fill fill;
  fill.extreme_magnitude = large_magnitude(dtype);
  return fill;
}

std::string describe(const at::Tensor& tensor) {
  std::ostringstream text;
  text << dtype_name(tensor.scalar_type()) << tensor.sizes();
  if (!tensor.is_contiguous()) text << " strides " << tensor.strides();
  return text.str();
}

}  // namespace native_ops::samples
