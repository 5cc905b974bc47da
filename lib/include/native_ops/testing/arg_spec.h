#pragma once
// A text form of an op call's arguments, for tools (`native-ops explain`): the inputs a
// cond is asked about, without writing C++.
//
//   "f32[8,128,1], f32[8,1,256]"          two contiguous CPU tensors
//   "bf16[64,1024]{1,64}@cuda:0, -1, false" strides {1,64} on cuda:0, then an int and a bool
//   "f64[3,4], f64[4], 2.5"               a float scalar
//   "i64[2,3], [0,1], none"               an int list and None
//   "f32[8,128], f32[8,128], -1, f32"     a dtype alone: a ScalarType argument
//
// Tensors: dtype (f16, bf16, f32, f64, i8, i16, i32, i64, u8, bool; fp16/fp32/fp64 and
// half/float/double too), then [sizes], then optionally {strides} and @device.

#include <string_view>
#include "native_ops/export.h"

#include <ATen/core/stack.h>

namespace native_ops {

/// Parses `spec` into boxed arguments. Tensors are allocated on their device with the
/// given sizes and strides and left uninitialised: conds look at metadata, not values.
/// Throws native_ops::Error naming the position and what was expected.
NATIVE_OPS_API torch::jit::Stack parse_arg_spec(std::string_view spec);

}  // namespace native_ops
