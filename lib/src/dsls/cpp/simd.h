#pragma once
// Explicit SIMD for host kernels through GCC/Clang vector extensions: one 16-lane float
// type that each cpu_dispatch.h clone lowers to its own registers (one zmm with AVX-512,
// two ymm with AVX2, four xmm otherwise). Auto-vectorisation gives up on the reductions
// and the branch-free exp below, so they are written out.

#include <cstdint>
#include <cstring>

// Inlined into each clone, so that each uses its own instructions; an out-of-line copy
// would be compiled for the baseline CPU only.
#define NATIVE_OPS_SIMD_INLINE inline __attribute__((always_inline))

namespace native_ops::kernels::simd {

constexpr int kLanes = 16;
using Floats = float __attribute__((vector_size(kLanes * sizeof(float))));
using Ints = int32_t __attribute__((vector_size(kLanes * sizeof(int32_t))));

NATIVE_OPS_SIMD_INLINE Floats load(const float* p) {
  Floats v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
NATIVE_OPS_SIMD_INLINE void store(float* p, Floats v) { std::memcpy(p, &v, sizeof v); }

/// Loads `n` < kLanes values, the other lanes set to `fill`.
NATIVE_OPS_SIMD_INLINE Floats load_partial(const float* p, int64_t n, float fill) {
  float lanes[kLanes];
  for (int i = 0; i < kLanes; ++i) lanes[i] = i < n ? p[i] : fill;
  return load(lanes);
}
NATIVE_OPS_SIMD_INLINE void store_partial(float* p, Floats v, int64_t n) {
  float lanes[kLanes];
  store(lanes, v);
  for (int64_t i = 0; i < n; ++i) p[i] = lanes[i];
}

NATIVE_OPS_SIMD_INLINE Floats splat(float x) { return Floats{} + x; }

NATIVE_OPS_SIMD_INLINE float max_of(Floats v) {
  float m = v[0];
  for (int i = 1; i < kLanes; ++i) m = v[i] > m ? v[i] : m;
  return m;
}
NATIVE_OPS_SIMD_INLINE float sum_of(Floats v) {
  float s = 0.0f;
  for (int i = 0; i < kLanes; ++i) s += v[i];
  return s;
}

/// exp(x) for x <= 0, about 1 ulp (Cephes polynomial); 0 below log(FLT_MIN); NaN stays NaN.
NATIVE_OPS_SIMD_INLINE Floats exp_nonpositive(Floats x) {
  const Floats lowest = splat(-87.3365447f);
  const Ints underflow = x < lowest;
  const Floats clamped = underflow ? lowest : x;
  // n = round(x / ln 2), by the 1.5 * 2^23 trick; r = x - n ln 2 in two parts.
  const Floats magic = splat(12582912.0f);
  const Floats n = (clamped * 1.44269504088896341f + magic) - magic;
  Floats r = clamped - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  Floats p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const Ints exponent = (__builtin_convertvector(n, Ints) + 127) << 23;
  Floats scale;
  std::memcpy(&scale, &exponent, sizeof scale);
  return underflow ? Floats{} : p * scale;
}

}  // namespace native_ops::kernels::simd
