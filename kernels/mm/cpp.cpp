// mm at CUDA in bfloat16 and float16 where a size or a leading dimension is not whole
// 16-byte vectors (a vocabulary of 50257; a view into wider rows). cuBLAS then runs kernels
// that load an element at a time: on the H200 the vocabulary head of a 50257-token model,
// forward and both gradients, took 20 of a 36 ms training step, against 3 ms at 50264.
// Here the operands are copied into buffers whose inner size, column count and leading
// dimensions are whole vectors (the inner padding zeroed, so it adds nothing), cuBLAS's
// aligned kernels run on them, and the output's real columns are copied out.
#include <algorithm>
#include <cstdint>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm_ops.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include "native_ops/typed.h"
#include "native_ops/verdict.h"

namespace native_ops::kernels {

namespace {

constexpr int64_t kVectorBytes = 16;
// Where the copies cost more than the aligned kernels save (docs/design/padded-mm.md: the
// H200 grid, bfloat16 and float16): under 10^9 flops, or 5 10^8 a copy or zeroing launch
// (at 1.06e9 flops, two launches ran 1.15-1.56x aten, four 0.75-0.83x), or under 512 flops
// an element copied.
constexpr double kMinFlops = 1e9;
constexpr double kMinFlopsPerLaunch = 5e8;
constexpr double kMinFlopsPerCopiedElement = 512;

int64_t round_up(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

bool column_major(const at::Tensor& x) { return x.stride(0) == 1 && x.stride(1) != 1; }

// Whether cuBLAS can read `x` where it is with its aligned kernels: one unit stride, a
// leading dimension of whole vectors that spans the other size, 16-byte aligned data.
bool aligned_in_place(const at::Tensor& x) {
  const int64_t per_vector = kVectorBytes / x.element_size();
  if (reinterpret_cast<uintptr_t>(x.const_data_ptr()) % kVectorBytes != 0) return false;
  const auto spans = [per_vector](int64_t leading, int64_t size) {
    return leading % per_vector == 0 && leading >= std::max<int64_t>(size, 1);
  };
  if (x.stride(1) == 1 && spans(x.stride(0), x.size(1))) return true;
  return x.stride(0) == 1 && spans(x.stride(1), x.size(0));
}

// What the override copies for self [m, k] x mat2 [k, n]. cuBLAS runs its aligned kernels
// when every leading dimension is whole vectors, and so are n (the output's row length) and k
// where an operand runs along it (a row-major self, a column-major mat2); m may stay odd,
// and so may k where both operands stride across it. Operands are copied in their own
// order (a strided one row-major) where they are not aligned as they lie or k is padded.
struct PaddedPlan {
  int64_t m, k, n, k_padded, n_padded;
  bool copy_self, copy_mat2;

  PaddedPlan(const at::Tensor& self, const at::Tensor& mat2) : m(self.size(0)), k(self.size(1)), n(mat2.size(1)) {
    const int64_t per_vector = kVectorBytes / self.element_size();
    const bool along_k = !column_major(self) || column_major(mat2);
    k_padded = along_k ? round_up(k, per_vector) : k;
    n_padded = round_up(n, per_vector);
    copy_self = k_padded != k || !aligned_in_place(self);
    copy_mat2 = k_padded != k || n_padded != n || !aligned_in_place(mat2);
  }
  bool copy_out() const { return n_padded != n; }
  // The copies and zeroings padded_mm launches besides the GEMM.
  int launches() const {
    const int per_operand = k_padded != k ? 2 : 1;
    return (copy_self ? per_operand : 0) + (copy_mat2 ? per_operand : 0) + (copy_out() ? 1 : 0);
  }
  double flops() const { return 2.0 * m * n * k; }
  double elements_copied() const {
    return (copy_self ? double(m) * k : 0) + (copy_mat2 ? double(k) * n : 0) + (copy_out() ? double(m) * n : 0);
  }
};

Verdict padded_mm_applies(const at::Tensor& self, const at::Tensor& mat2) {
  if (self.dim() != 2 || mat2.dim() != 2 || self.size(1) != mat2.size(0)) {
    return decline("not a valid mm (aten reports the error)");
  }
  const auto dtype = self.scalar_type();
  if (dtype != mat2.scalar_type()) return decline("dtypes differ (aten reports the error)");
  if (dtype != at::kBFloat16 && dtype != at::kHalf) return decline("dtype is not bfloat16 or float16");
  if (self.device() != mat2.device()) return decline("inputs on different devices");
  if (self.numel() == 0 || mat2.numel() == 0) return decline("empty input");
  if (self.is_neg() || mat2.is_neg()) return decline("a negative-bit view");
  const PaddedPlan plan(self, mat2);
  if (!plan.copy_self && !plan.copy_mat2) {
    return decline(
        "aligned as it lies (leading dimensions, n and a contiguous k whole 16-byte vectors): cuBLAS's aligned kernels "
        "run");
  }
  if (plan.flops() < std::max(kMinFlops, kMinFlopsPerLaunch * plan.launches())) {
    return decline("under 10^9 flops, or 5 10^8 a copy launched: aten is as fast");
  }
  if (plan.flops() < kMinFlopsPerCopiedElement * plan.elements_copied()) {
    return decline("under 512 flops an element copied: the copies cost more than the aligned kernels save");
  }
  return true;
}

// `x` [rows, cols] copied into a buffer of [rows_padded, cols_padded] in x's own order
// (row- or column-major) whose leading dimension is whole vectors, the padding rows or
// columns zeroed where asked.
at::Tensor padded_copy(const at::Tensor& x, int64_t rows_padded, int64_t cols_padded, bool zero_rows, bool zero_cols) {
  const int64_t per_vector = kVectorBytes / x.element_size();
  const int64_t rows = x.size(0), cols = x.size(1);
  const at::Tensor buffer =
      column_major(x)
          ? at::empty({cols_padded, round_up(rows_padded, per_vector)}, x.options()).t().narrow(0, 0, rows_padded)
          : at::empty({rows_padded, round_up(cols_padded, per_vector)}, x.options()).narrow(1, 0, cols_padded);
  if (zero_rows && rows_padded > rows) buffer.narrow(0, rows, rows_padded - rows).zero_();
  if (zero_cols && cols_padded > cols) buffer.narrow(0, 0, rows).narrow(1, cols, cols_padded - cols).zero_();
  buffer.narrow(0, 0, rows).narrow(1, 0, cols).copy_(x);
  return buffer;
}

at::Tensor padded_product(const at::Tensor& self, const at::Tensor& mat2) {
  const PaddedPlan plan(self, mat2);
  // Only the inner padding is zeroed: mat2's padding columns make output columns that are
  // dropped.
  const at::Tensor a = plan.copy_self ? padded_copy(self, plan.m, plan.k_padded, false, true) : self;
  const at::Tensor b = plan.copy_mat2 ? padded_copy(mat2, plan.k_padded, plan.n_padded, true, false) : mat2;
  at::Tensor product = call_original<at::_ops::mm>(a, b);
  if (!plan.copy_out()) return product;
  at::Tensor out = at::empty({plan.m, plan.n}, self.options());
  out.copy_(product.narrow(1, 0, plan.n));
  return out;
}

at::Tensor padded_mm(const at::Tensor& self, const at::Tensor& mat2) {
  const c10::DeviceGuard device(self.device());
  try {
    return padded_product(self, mat2);
  } catch (const c10::OutOfMemoryError&) {
    // The copies need memory aten's mm does not (up to both operands and the output
    // again, until the call returns): where the allocator has none to give, aten runs.
    return call_original<at::_ops::mm>(self, mat2);
  }
}

}  // namespace

void register_mm_cpp() {
  register_op_override<at::_ops::mm>("cpp", c10::DispatchKey::CUDA, &padded_mm_applies, &padded_mm);
}

}  // namespace native_ops::kernels
