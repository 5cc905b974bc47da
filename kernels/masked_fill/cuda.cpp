// masked_fill.Scalar and masked_fill_.Scalar at CUDA for contiguous float32, float16 and
// bfloat16 tensors under a contiguous bool mask broadcast over one run of their dimensions
// (attention scores under a causal mask repeated over batch and heads, or a padding mask
// over heads; a mask of their shape): one pass, where aten's masked_fill clones and then
// fills, and its masked_fill_ walks the broadcast mask element by element
// (kernels/masked_fill/cuda_kernels.cu). The value is converted as aten converts it.
#include <cstring>
#include <optional>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/masked_fill_ops.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/overflows.h>

#include "cuda_abi.h"
#include "dsls/cuda/kernels_library.h"
#include "mask_broadcast.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

// Whether aten converts `value` to T without its overflow error.
template <class T>
bool converts(const c10::Scalar& value) {
  if (value.isBoolean()) return true;
  if (value.isFloatingPoint()) return !c10::overflows<T, double>(value.toDouble());
  if (value.isUnsigned()) return !c10::overflows<T, uint64_t>(value.toUInt64());
  return !c10::overflows<T, int64_t>(value.toLong());
}

// Whether the kernel takes `self` under `mask`, into a new tensor or (`in_place`) self.
Verdict kernel_applies(const at::Tensor& self, const at::Tensor& mask, const c10::Scalar& value, bool in_place) {
  const auto dtype = self.scalar_type();
  if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16)
    return decline("dtype is not float32, float16 or bfloat16");
  if (mask.scalar_type() != at::kBool) return decline("the mask is not bool (aten reports the error)");
  if (mask.device() != self.device()) return decline("the mask is on another device");
  if (self.numel() == 0) return decline("empty input");
  if (!self.is_contiguous() || self.is_neg()) return decline("the input is not contiguous");
  if (!mask.is_contiguous()) return decline("the mask is not contiguous");
  if (self.has_names() || mask.has_names()) return decline("named tensors");
  if (value.isComplex() || value.isSymbolic()) return decline("a complex or symbolic value");
  const bool converts_to_dtype = dtype == at::kFloat  ? converts<float>(value)
                                 : dtype == at::kHalf ? converts<c10::Half>(value)
                                                      : converts<c10::BFloat16>(value);
  if (!converts_to_dtype) return decline("the value overflows the dtype (aten reports the error)");
  const std::optional<MaskBroadcast> shape = mask_broadcast(self.sizes(), mask.sizes());
  if (!shape.has_value()) return decline("the mask broadcasts over other dimensions than a run of the input's");
  if (shape->outer * ((shape->width + 255) / 256) > 0x7fffffff) return decline("more mask rows than one launch covers");
  if (const char* slower = cuda_masked_fill_slower_than_aten(*shape, self.element_size(), in_place)) {
    return decline(slower);
  }
  return true;
}

// The value's bits in the dtype, converted as aten's kernel converts it.
uint32_t value_bits(const c10::Scalar& value, at::ScalarType dtype) {
  if (dtype == at::kHalf) return value.to<c10::Half>().x;
  if (dtype == at::kBFloat16) return value.to<c10::BFloat16>().x;
  const float as_float = value.to<float>();
  uint32_t bits = 0;
  std::memcpy(&bits, &as_float, sizeof bits);
  return bits;
}

Verdict masked_fill_applies(const at::Tensor& self, const at::Tensor& mask, const c10::Scalar& value) {
  return kernel_applies(self, mask, value, false);
}

Verdict masked_fill_in_place_applies(at::Tensor& self, const at::Tensor& mask, const c10::Scalar& value) {
  const Verdict verdict = kernel_applies(self, mask, value, true);
  if (verdict.accepted() && self.storage().is_alias_of(mask.storage())) {
    return decline("the mask shares the input's storage");
  }
  return verdict;
}

// Writes `self` under `mask` into `out` (a new tensor shaped as self, or self).
void fill(const at::Tensor& self, const at::Tensor& mask, const c10::Scalar& value, at::Tensor& out) {
  const MaskBroadcast shape = *mask_broadcast(self.sizes(), mask.sizes());
  static const auto masked_fill_kernel = cuda::kernel<NativeOpsMaskedFillFn>(NATIVE_OPS_MASKED_FILL_SYMBOL);
  cuda::check(
      masked_fill_kernel(cuda::dtype_code(self), self.const_data_ptr(),
                         static_cast<const uint8_t*>(mask.const_data_ptr()), value_bits(value, self.scalar_type()),
                         out.mutable_data_ptr(), shape.outer, shape.repeats, shape.width, cuda::current_stream(self)),
      "masked_fill");
}

at::Tensor masked_fill(const at::Tensor& self, const at::Tensor& mask, const c10::Scalar& value) {
  const c10::DeviceGuard device(self.device());
  at::Tensor out = at::empty(self.sizes(), self.options());
  fill(self, mask, value, out);
  return out;
}

at::Tensor& masked_fill_in_place(at::Tensor& self, const at::Tensor& mask, const c10::Scalar& value) {
  const c10::DeviceGuard device(self.device());
  fill(self, mask, value, self);
  return self;
}

}  // namespace

void register_masked_fill_cuda() {
  register_op_override<at::_ops::masked_fill_Scalar>("cuda", c10::DispatchKey::CUDA, &masked_fill_applies,
                                                     &masked_fill);
  register_op_override<at::_ops::masked_fill__Scalar>("cuda", c10::DispatchKey::CUDA, &masked_fill_in_place_applies,
                                                      &masked_fill_in_place);
}

}  // namespace native_ops::kernels
