#pragma once
// The size features of a call, and the functions that compute them: what the router
// needs of selection.h. Internal: use selection.h.

#include <array>
#include <cstdint>
#include <functional>
#include <utility>

#include <ATen/core/boxing/impl/make_boxed_from_unboxed_functor.h>
#include <ATen/core/stack.h>
#include <c10/core/ScalarType.h>

#include "native_ops/boxed.h"

namespace native_ops {

/// At most this many features per op.
inline constexpr size_t kMaxShapeFeatures = 4;

/// The size features of one call, in the order the op declared their names.
struct ShapeFeatures {
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  int8_t cuda_device = -1;  // the CUDA device of the call, -1 when it is not on one
  uint8_t count = 0;
  std::array<int64_t, kMaxShapeFeatures> values{};
};

namespace detail {
/// A features function, in the calling convention of its op's graphs.
struct FeaturesFunction {
  virtual ~FeaturesFunction() = default;
  /// The features of a call given boxed (`arguments`: exactly the schema's), for tools.
  virtual ShapeFeatures of(const c10::FunctionSchema& schema, torch::jit::Stack arguments) const = 0;
};

template <class Sig>
struct TypedFeatures;

template <class Ret, class... Args>
struct TypedFeatures<Ret(Args...)> final : FeaturesFunction {
  using Fn = std::function<ShapeFeatures(Args...)>;
  Fn fn;

  ShapeFeatures of(const c10::FunctionSchema&, torch::jit::Stack arguments) const override {
    return unboxed(arguments, std::index_sequence_for<Args...>{});
  }

 private:
  template <size_t... I>
  ShapeFeatures unboxed(torch::jit::Stack& arguments, std::index_sequence<I...>) const {
    return fn(c10::impl::ivalue_to_arg<typename c10::impl::decay_if_not_tensor<Args>::type, false>::call(
        torch::jit::peek(arguments, I, sizeof...(Args)))...);
  }
};

struct BoxedFeatures final : FeaturesFunction {
  std::function<ShapeFeatures(const BoxedArgs&)> fn;
  ShapeFeatures of(const c10::FunctionSchema& schema, torch::jit::Stack arguments) const override {
    return fn(BoxedArgs(schema, arguments));
  }
};

}  // namespace detail

}  // namespace native_ops
