#pragma once
// Selection tables: which node runs, or aten, per dtype and shape bucket of an op, as
// measured (`native-ops tune`). A table is part of a policy (version 2, policy.h); the
// router looks the call up in it instead of walking the nodes in order.
//
// An op declares the size features that decide its speed once, for every key:
//
//   native_ops::register_shape_features<at::_ops::_softmax>({"rows", "width"},
//       [](const at::Tensor& self, int64_t, bool) {
//         return native_ops::row_features(self, self.size(-1));
//       });
//
// With a table in force, a call's features pick one cell: the node it names runs if its
// cond accepts the call, else the call goes to aten; a cell that names aten sends the call
// to aten. Calls of a dtype the table lacks, on a device it was not tuned on, or whose
// features cannot be computed are routed in order, as without a table.

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include "native_ops/export.h"

#include <ATen/core/Tensor.h>
#include <c10/core/DispatchKey.h>
#include <c10/core/ScalarType.h>

#include "native_ops/boxed.h"
#include "native_ops/detail/features.h"
#include "native_ops/selection_table.h"
#include "native_ops/typed.h"

namespace native_ops {

/// The features of a call on `input`: its dtype and CUDA device, and `values` in the order
/// the op declared their names (the first kMaxShapeFeatures: more are left out).
NATIVE_OPS_API ShapeFeatures tensor_features(const at::Tensor& input, std::initializer_list<int64_t> values);

/// The features of a row op (a reduction over rows of `width` elements): dtype, CUDA device
/// and {rows, width}, rows being numel / width (0 for an empty tensor).
NATIVE_OPS_API ShapeFeatures row_features(const at::Tensor& input, int64_t width);

namespace detail {
NATIVE_OPS_API void register_features(std::string_view lib_symbol, std::string_view op_symbol,
                                      std::vector<std::string> names, std::unique_ptr<FeaturesFunction> fn, bool typed);
}  // namespace detail

/// Declares the features of `Op` (an `at::_ops::<op>` struct) for its typed graphs at every
/// key; `fn` takes the op's arguments and must neither allocate nor throw on the calls it
/// routes. Throws native_ops::Error when the op has features already, or `names` is empty,
/// holds more than kMaxShapeFeatures, a duplicate or an empty name.
template <class Op>
void register_shape_features(std::vector<std::string> names,
                             typename detail::TypedFeatures<typename Op::schema>::Fn fn) {
  auto features = std::make_unique<detail::TypedFeatures<typename Op::schema>>();
  features->fn = std::move(fn);
  const std::string_view qualified(Op::name);
  detail::register_features(qualified.substr(0, qualified.find("::")),
                            detail::op_symbol_of(qualified, Op::overload_name), std::move(names), std::move(features),
                            /*typed=*/true);
}

/// The same for an op whose graphs are boxed.
NATIVE_OPS_API void register_shape_features(std::string_view lib_symbol, std::string_view op_symbol,
                                            std::vector<std::string> names,
                                            std::function<ShapeFeatures(const BoxedArgs&)> fn);

/// The feature names of aten::`op_symbol`, or nullopt when it declares none.
NATIVE_OPS_API std::optional<std::vector<std::string>> shape_feature_names(std::string_view op_symbol);

/// The features of a call of aten::`op_symbol` (arguments: exactly the schema's, defaults
/// filled in). Throws native_ops::Error when the op declares no features.
NATIVE_OPS_API ShapeFeatures shape_features_of(std::string_view op_symbol, const torch::jit::Stack& arguments);

/// The bucket of `value` along one feature: how many of `edges` are <= value.
NATIVE_OPS_API size_t bucket_of(const std::vector<int64_t>& edges, int64_t value);
/// "[64, 4096)", "[4096, inf)": bucket `bucket` of `edges`, for people.
NATIVE_OPS_API std::string bucket_range(const std::vector<int64_t>& edges, size_t bucket);

/// The name and compute capability of CUDA device `index` ("NVIDIA H200", "9.0"), read
/// through the driver that the process has loaded; nullopt when none is loaded or the
/// device does not exist. Never loads the driver or initialises CUDA itself.
NATIVE_OPS_API std::optional<TunedDevice> loaded_cuda_device(int index);

/// The model names of this machine's NVIDIA GPUs ("NVIDIA H200"), in PCI bus order (the
/// order CUDA_DEVICE_ORDER=PCI_BUS_ID numbers them), read from the NVIDIA driver's files
/// under /proc/driver/nvidia/gpus: never loads a library or initialises CUDA. Empty where
/// the driver is not loaded.
NATIVE_OPS_API std::vector<std::string> nvidia_gpu_models();

}  // namespace native_ops
