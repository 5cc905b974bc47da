// multinomial at CUDA for one sample a row of contiguous float32, float16 and bfloat16
// probabilities (1-D or 2-D): aten's own exponential draw from the same generator, then
// one kernel for aten's checks, its division and its argmax
// (kernels/multinomial/cuda_kernels.cu), so that the sample is the one aten draws.
#include <optional>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/multinomial_ops.h>
#include <c10/core/DeviceGuard.h>

#include "cuda_abi.h"
#include "dsls/cuda/kernels_library.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

Verdict multinomial_applies(const at::Tensor& self, c10::SymInt num_samples, bool,
                            std::optional<at::Generator> generator) {
  const auto dtype = self.scalar_type();
  if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16)
    return decline("dtype is not float32, float16 or bfloat16");
  const auto samples = num_samples.maybe_as_int();
  if (!samples.has_value() || *samples != 1) return decline("not one sample a row");
  if (self.dim() != 1 && self.dim() != 2) return decline("not 1-D or 2-D (aten reports the error)");
  if (self.numel() == 0) return decline("empty input");
  if (!self.is_contiguous() || self.is_neg()) return decline("not contiguous");
  if (self.size(-1) > (int64_t{1} << 24)) return decline("more than 2^24 categories (aten reports the error)");
  if (self.numel() / self.size(-1) > 0x7fffffff) return decline("more rows than one launch covers");
  if (generator.has_value() && generator->defined() && generator->device().type() != c10::DeviceType::CUDA)
    return decline("a generator of another device (aten reports the error)");
  if (const char* slower = cuda_multinomial_slower_than_aten(self.size(-1))) {
    return decline(slower);
  }
  return true;
}

at::Tensor multinomial(const at::Tensor& self, c10::SymInt, bool, std::optional<at::Generator> generator) {
  const c10::DeviceGuard device(self.device());
  const int64_t categories = self.size(-1);
  const int64_t rows = self.numel() / categories;
  // aten's draw, as its multinomial makes it: the same generator state, the same numbers.
  const at::Tensor draws = at::empty_like(self).exponential_(1, std::move(generator));
  at::Tensor indices = self.dim() == 1 ? at::empty({1}, self.options().dtype(at::kLong))
                                       : at::empty({rows, 1}, self.options().dtype(at::kLong));
  static const auto sample_one = cuda::kernel<NativeOpsSampleOneFn>(NATIVE_OPS_SAMPLE_ONE_SYMBOL);
  cuda::check(sample_one(cuda::dtype_code(self), self.const_data_ptr(), draws.const_data_ptr(),
                         indices.mutable_data_ptr<int64_t>(), rows, categories, cuda::current_stream(self)),
              "sample_one");
  return indices;
}

}  // namespace

void register_multinomial_cuda() {
  register_op_override<at::_ops::multinomial>("cuda", c10::DispatchKey::CUDA, &multinomial_applies, &multinomial);
}

}  // namespace native_ops::kernels
