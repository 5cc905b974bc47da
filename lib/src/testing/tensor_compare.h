#pragma once
// Comparing an override's outputs with the reference's: metadata, then values within a
// tolerance, NaN in the same places, with the first mismatching index.

#include <optional>
#include <string>

#include <ATen/core/Tensor.h>

#include "native_ops/testing/conformance.h"
#include "native_ops/testing/op_db.h"

namespace native_ops::detail {

/// dtype, shape, device, then strides (of the dimensions longer than 1); the first that
/// differs. `what` names the output ("output 0").
std::optional<Mismatch> compare_metadata(const at::Tensor& actual, const at::Tensor& expected, const std::string& what);

/// Values: |actual - expected| <= atol + rtol * |expected|, equal infinities equal, NaN
/// where and only where the reference has NaN. Exact for integral and bool tensors.
std::optional<Mismatch> compare_values(const at::Tensor& actual, const at::Tensor& expected, Tolerance tolerance,
                                       const std::string& what, const std::string& check = "values");

/// Against a float64 run of the original kernel: fails only where `actual` is outside the
/// tolerance of `exact` AND more than twice as far from it as the original kernel in the
/// sample's own dtype (`original`) is, since that kernel rounds too.
std::optional<Mismatch> compare_with_float64(const at::Tensor& actual, const at::Tensor& original,
                                             const at::Tensor& exact, Tolerance tolerance, const std::string& what);

}  // namespace native_ops::detail
