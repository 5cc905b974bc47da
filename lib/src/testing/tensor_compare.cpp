// Output comparison for conformance sweeps. Everything is computed in float64 by aten's own
// kernels (routing bypassed), so a comparison never depends on the kernel under test, and
// on the device of the tensor under test: a sample's tensors of tens of millions of
// elements do not cross to the host and back a check at a time.
#include "testing/tensor_compare.h"

#include <sstream>

#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>

#include "native_ops/node_access.h"
#include "native_ops/testing/samples.h"

namespace native_ops::detail {

namespace {

// The multi-index of element `flat` of a tensor of `sizes`, in row-major order.
std::vector<int64_t> unravel(int64_t flat, c10::IntArrayRef sizes) {
  std::vector<int64_t> index(sizes.size());
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    index[d] = sizes[d] == 0 ? 0 : flat % sizes[d];
    flat = sizes[d] == 0 ? 0 : flat / sizes[d];
  }
  return index;
}

std::string show_index(const std::vector<int64_t>& index) {
  std::ostringstream text;
  text << "[";
  for (size_t i = 0; i < index.size(); ++i) text << (i ? "," : "") << index[i];
  text << "]";
  return text.str();
}

template <class T>
std::string show(const T& value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

at::Tensor flat_double(const at::Tensor& tensor, c10::Device device) {
  return tensor.detach().to(device, at::kDouble).contiguous().view(-1);
}

// |a - b|, with equal infinities at distance 0.
at::Tensor distance(const at::Tensor& a, const at::Tensor& b) {
  return at::where(a == b, at::zeros_like(a), (a - b).abs());
}

struct Errors {
  double max_abs = 0;
  double max_rel = 0;
};

Errors largest_errors(const at::Tensor& diff, const at::Tensor& expected) {
  const at::Tensor finite = diff.isfinite();
  Errors errors;
  if (diff.numel() == 0) return errors;
  errors.max_abs = at::where(finite, diff, at::zeros_like(diff)).max().item<double>();
  const at::Tensor rel = diff / expected.abs();
  errors.max_rel = at::where(rel.isfinite(), rel, at::zeros_like(rel)).max().item<double>();
  return errors;
}

Mismatch describe_mismatch(const std::string& check, const std::string& what, const at::Tensor& bad,
                           const at::Tensor& actual, const at::Tensor& expected, const at::Tensor& diff,
                           c10::IntArrayRef sizes, const std::string& reference_name) {
  Mismatch mismatch;
  mismatch.check = check;
  const int64_t count = bad.sum().item<int64_t>();
  const int64_t first = bad.nonzero().select(1, 0)[0].item<int64_t>();
  mismatch.first_index = unravel(first, sizes);
  const Errors errors = largest_errors(diff, expected);
  mismatch.max_abs_error = errors.max_abs;
  mismatch.max_rel_error = errors.max_rel;
  mismatch.message = what + ": " + std::to_string(count) + " of " + std::to_string(bad.numel()) +
                     " elements differ from the " + reference_name + "; first at " + show_index(mismatch.first_index) +
                     ": got " + show(actual[first].item<double>()) + ", expected " +
                     show(expected[first].item<double>());
  return mismatch;
}

}  // namespace

std::optional<Mismatch> compare_metadata(const at::Tensor& actual, const at::Tensor& expected,
                                         const std::string& what) {
  auto mismatch = [&](const std::string& check, const std::string& got, const std::string& want) {
    return Mismatch{check, what + ": " + check + " is " + got + ", the reference's is " + want, 0, 0, {}};
  };
  if (actual.scalar_type() != expected.scalar_type()) {
    return mismatch("dtype", dtype_name(actual.scalar_type()), dtype_name(expected.scalar_type()));
  }
  if (actual.sizes() != expected.sizes()) return mismatch("shape", show(actual.sizes()), show(expected.sizes()));
  if (actual.device() != expected.device()) return mismatch("device", actual.device().str(), expected.device().str());
  if (actual.numel() > 1) {
    for (int64_t d = 0; d < actual.dim(); ++d) {
      if (actual.size(d) > 1 && actual.stride(d) != expected.stride(d)) {
        return mismatch("strides", show(actual.strides()), show(expected.strides()));
      }
    }
  }
  return std::nullopt;
}

std::optional<Mismatch> compare_values(const at::Tensor& actual, const at::Tensor& expected, Tolerance tolerance,
                                       const std::string& what, const std::string& check) {
  if (actual.numel() == 0) return std::nullopt;
  const BypassRouting bypass;
  const at::Tensor a = flat_double(actual, actual.device());
  const at::Tensor e = flat_double(expected, actual.device());
  const at::Tensor diff = distance(a, e);
  const at::Tensor nan_differs = a.isnan() != e.isnan();
  const at::Tensor out_of_tolerance = (diff > tolerance.atol + tolerance.rtol * e.abs()) & e.isnan().logical_not();
  const at::Tensor inf_differs = e.isinf() & (a != e);  // the tolerance of an infinity is infinite
  const at::Tensor bad = nan_differs | out_of_tolerance | inf_differs;
  if (!bad.any().item<bool>()) return std::nullopt;
  return describe_mismatch(check, what, bad, a, e, diff, actual.sizes(), "reference");
}

std::optional<Mismatch> compare_with_float64(const at::Tensor& actual, const at::Tensor& original,
                                             const at::Tensor& exact, Tolerance tolerance, const std::string& what) {
  if (actual.numel() == 0) return std::nullopt;
  const BypassRouting bypass;
  const at::Tensor a = flat_double(actual, actual.device());
  const at::Tensor o = flat_double(original, actual.device());
  const at::Tensor x = flat_double(exact, actual.device());
  const at::Tensor diff = distance(a, x);
  const at::Tensor comparable = a.isnan().logical_not() & x.isnan().logical_not();
  const at::Tensor outside = diff > tolerance.atol + tolerance.rtol * x.abs();
  const at::Tensor worse = diff > 2 * distance(o, x) + tolerance.atol;
  const at::Tensor bad = comparable & outside & worse;
  if (!bad.any().item<bool>()) return std::nullopt;
  return describe_mismatch("float64", what, bad, a, x, diff, actual.sizes(), "float64 reference");
}

}  // namespace native_ops::detail
