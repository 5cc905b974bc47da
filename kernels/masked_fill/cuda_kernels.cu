// masked_fill on the GPU in one pass, the input read once and the output written once,
// where aten's masked_fill clones the input and then fills the clone (two reads and two
// writes). Mask rows of a block's vectors or more: a thread loads a vector of a mask row
// once and applies it to the same vector of every input row that mask row covers in its
// share. Narrower or odd mask rows: a thread a vector of the flat input, its mask elements
// found by divisions once a vector and a walk along the rows. 16-byte loads and stores
// where the pointers are aligned. In place, `out` is `in`: each vector is read before the
// same thread writes it.
#include <cstdint>

#include "cuda_abi.h"
#include "dsls/cuda/common.cuh"

namespace native_ops::cuda {
namespace {

constexpr int kBlockThreads = 256;
// Loads of as many repeats in flight a thread before their stores.
constexpr int kUnroll = 4;
// The rows path's grid: 16 blocks an SM, enough waves that the last one is short (two of
// 8 blocks at 32 registers, four of 4 at the 16-bit kernel's 64).
constexpr int kBlocksPerSm = 2048 / kBlockThreads;
constexpr int kWaves = 2;

template <class T>
__device__ __forceinline__ T from_bits(uint32_t bits);
template <>
__device__ __forceinline__ float from_bits<float>(uint32_t bits) {
  return __uint_as_float(bits);
}
template <>
__device__ __forceinline__ __half from_bits<__half>(uint32_t bits) {
  return __ushort_as_half(static_cast<unsigned short>(bits));
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_bits<__nv_bfloat16>(uint32_t bits) {
  return __ushort_as_bfloat16(static_cast<unsigned short>(bits));
}

// Each block of the grid's x covers up to kBlockThreads vectors of one mask row (`outer`
// rows of `vectors` vectors), a thread one vector; block row y the repeats
// [y * share, (y + 1) * share) of that mask row.
template <class T, int VEC>
__global__ void __launch_bounds__(kBlockThreads)
    masked_fill_repeats(const T* in, const uint8_t* __restrict__ mask, uint32_t value_bits, T* out, int64_t repeats,
                        int64_t vectors, int64_t blocks_a_row, int64_t share) {
  using Elements = Vec<T, VEC>;
  using Flags = Vec<uint8_t, VEC>;
  // 32-bit: the grid's x is; a 64-bit division takes several times the instructions.
  const unsigned row = blockIdx.x / static_cast<unsigned>(blocks_a_row);
  const int64_t j =
      static_cast<int64_t>(blockIdx.x - row * static_cast<unsigned>(blocks_a_row)) * kBlockThreads + threadIdx.x;
  if (j >= vectors) return;
  const Flags flags = reinterpret_cast<const Flags*>(mask)[row * vectors + j];
  const T value = from_bits<T>(value_bits);
  const int64_t first = static_cast<int64_t>(blockIdx.y) * share;
  const int64_t end = first + share < repeats ? first + share : repeats;
  const int64_t start = row * repeats * vectors + j;
  const Elements* source = reinterpret_cast<const Elements*>(in) + start;
  Elements* target = reinterpret_cast<Elements*>(out) + start;
  for (int64_t r = first; r < end; r += kUnroll) {
    Elements x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (r + u < end) x[u] = source[(r + u) * vectors];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (r + u < end) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
          if (flags.v[k] != 0) x[u].v[k] = value;
        }
        target[(r + u) * vectors] = x[u];
      }
    }
  }
}

// A thread a vector of VEC elements of the flat input (one element past its end at most
// VEC - 1: the last thread goes element by element): element e is row q = e / width, mask
// row q / repeats, column e - q * width; the next elements step along the rows. Index is
// uint32_t where the elements allow: a 64-bit division takes several times the
// instructions of a 32-bit one.
template <class T, int VEC, class Index>
__global__ void __launch_bounds__(kBlockThreads)
    masked_fill_flat(const T* in, const uint8_t* __restrict__ mask, uint32_t value_bits, T* out, Index elements,
                     Index repeats, Index width) {
  const Index first = (static_cast<Index>(blockIdx.x) * kBlockThreads + threadIdx.x) * VEC;
  if (first >= elements) return;
  const T value = from_bits<T>(value_bits);
  const Index row = first / width;
  Index column = first - row * width;
  const Index mask_index = row / repeats;
  Index repeat = row - mask_index * repeats;
  const uint8_t* mask_row = mask + static_cast<int64_t>(mask_index) * width;
  auto step = [&] {
    if (++column == width) {
      column = 0;
      if (++repeat == repeats) {
        repeat = 0;
        mask_row += width;
      }
    }
  };
  if (first + VEC <= elements) {
    using Elements = Vec<T, VEC>;
    Elements x = reinterpret_cast<const Elements*>(in)[first / VEC];
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      if (mask_row[column] != 0) x.v[k] = value;
      step();
    }
    reinterpret_cast<Elements*>(out)[first / VEC] = x;
  } else {
    for (Index e = first; e < elements; ++e) {
      out[e] = mask_row[column] != 0 ? value : in[e];
      step();
    }
  }
}

// Mask rows of whole vectors, a block's or more: masked_fill_repeats over block rows enough
// for the waves, each a share of at least one repeat (at most 65535 block rows).
template <class T, int VEC>
int launch_rows(const T* in, const uint8_t* mask, uint32_t value_bits, T* out, int64_t outer, int64_t repeats,
                int64_t width, cudaStream_t stream) {
  const int64_t vectors = width / VEC;
  const int64_t blocks_a_row = (vectors + kBlockThreads - 1) / kBlockThreads;
  const int64_t blocks_x = outer * blocks_a_row;
  if (blocks_x > 0x7fffffff) return static_cast<int>(cudaErrorInvalidValue);
  int sms = 0;
  if (const int error = current_device_sms(&sms); error != cudaSuccess) return error;
  const int64_t wanted = int64_t{sms} * kBlocksPerSm * kWaves;
  int64_t rows = (wanted + blocks_x - 1) / blocks_x;
  rows = rows < repeats ? rows : repeats;
  int64_t share = (repeats + rows - 1) / rows;
  if (share < (repeats + 65534) / 65535) share = (repeats + 65534) / 65535;
  rows = (repeats + share - 1) / share;
  const dim3 grid(static_cast<unsigned>(blocks_x), static_cast<unsigned>(rows));
  masked_fill_repeats<T, VEC>
      <<<grid, kBlockThreads, 0, stream>>>(in, mask, value_bits, out, repeats, vectors, blocks_a_row, share);
  return static_cast<int>(cudaGetLastError());
}

template <class T, int VEC>
int launch_flat(const T* in, const uint8_t* mask, uint32_t value_bits, T* out, int64_t elements, int64_t repeats,
                int64_t width, cudaStream_t stream) {
  const int64_t blocks = (elements + int64_t{kBlockThreads} * VEC - 1) / (int64_t{kBlockThreads} * VEC);
  if (blocks > 0x7fffffff) return static_cast<int>(cudaErrorInvalidValue);
  const auto grid = static_cast<unsigned>(blocks);
  // The last thread's first element plus a vector still fits the index.
  if (elements + kBlockThreads * VEC <= UINT32_MAX) {
    masked_fill_flat<T, VEC, uint32_t>
        <<<grid, kBlockThreads, 0, stream>>>(in, mask, value_bits, out, static_cast<uint32_t>(elements),
                                             static_cast<uint32_t>(repeats), static_cast<uint32_t>(width));
  } else {
    masked_fill_flat<T, VEC, int64_t>
        <<<grid, kBlockThreads, 0, stream>>>(in, mask, value_bits, out, elements, repeats, width);
  }
  return static_cast<int>(cudaGetLastError());
}

bool aligned(const void* pointer, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(pointer) % bytes == 0; }

}  // namespace
}  // namespace native_ops::cuda

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_masked_fill(int dtype, const void* in, const uint8_t* mask,
                                                      uint32_t value_bits, void* out, int64_t outer, int64_t repeats,
                                                      int64_t width, void* stream) {
  using namespace native_ops::cuda;
  if (outer == 0 || repeats == 0 || width == 0) return cudaSuccess;
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    constexpr int kVec = 16 / sizeof(T);
    const auto* input = static_cast<const T*>(in);
    auto* output = static_cast<T*>(out);
    const auto s = static_cast<cudaStream_t>(stream);
    const bool vectors = aligned(in, 16) && aligned(out, 16);
    if (vectors && width % kVec == 0 && width / kVec >= kBlockThreads && aligned(mask, kVec)) {
      return launch_rows<T, kVec>(input, mask, value_bits, output, outer, repeats, width, s);
    }
    const int64_t elements = outer * repeats * width;
    if (vectors) return launch_flat<T, kVec>(input, mask, value_bits, output, elements, repeats, width, s);
    return launch_flat<T, 1>(input, mask, value_bits, output, elements, repeats, width, s);
  });
}
