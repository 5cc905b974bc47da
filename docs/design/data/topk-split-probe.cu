// How many slices a row should topk's split take (docs/design/backward-and-topk.md, "The
// split's count"): kernels/topk's topk_rows over each row split into 1 to 32 slices, a block
// each, plus the merge launch, from a cold L2 (a 512 MiB read before each call), CUDA
// events, medians of 25 after 3 warm-ups; each split's values and indices compared with one
// block a row's; `*` marks plan_split's choice. Inputs uniform in [-8, 8). Build and run on a
// GPU machine from the repository root:
//   nvcc -O3 --expt-relaxed-constexpr -std=c++17 -arch=sm_90 -Ibench -Ikernels -Ilib/src \
//     docs/design/data/topk-split-probe.cu kernels/argmax/cuda_kernels.cu \
//     lib/src/dsls/cuda/kernels_library.cu -o topk-split-probe && ./topk-split-probe
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
#include "cuda_timing.cuh"
#include "topk/cuda_kernels.cu"
using namespace native_ops::cuda;
// uniform in [-8, 8) from a hash
template <class T>
__global__ void fill(T* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    uint32_t h = (uint32_t)i * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    h *= 3266489917u;
    h ^= h >> 16;
    p[i] = T(-8.f + 16.f * (h >> 8) * (1.f / 16777216.f));
  }
}
uint4 *flushbuf, *sink;
size_t flush_words = (size_t{512} << 20) / 16;
const auto cold = [] { read_through<<<1024, 512>>>(flushbuf, flush_words, sink); };
double copy_gbps;
template <class T>
void cell(const char* name, int64_t rows, int64_t width, int k, void* in, void* ws) {
  T* values;
  int64_t* indices;
  CHECK(cudaMalloc(&values, rows * k * sizeof(T)));
  CHECK(cudaMalloc(&indices, rows * k * 8));
  fill<T><<<2048, 256>>>((T*)in, rows * width, 1234u);
  std::vector<T> v0(rows * k);
  std::vector<int64_t> i0(rows * k);
  Split planned;
  CHECK((cudaError_t)plan_split(rows, width, k, &planned));
  const double floor_us = (double(rows) * width * sizeof(T) + rows * k * (sizeof(T) + 8.0)) / copy_gbps / 1e3;
  for (int slices : {1, 2, 3, 4, 6, 8, 12, 16, 32}) {
    if (slices > 1 && (slices > kSample / k || width / slices < kSample)) continue;
    const int64_t slice_width = (width + slices - 1) / slices;
    auto run = [&] {
      if (slices == 1) {
        TopkArgs<T> a{(const T*)in, values, indices, nullptr, width, width, 1, k, true};
        topk_rows<T><<<(unsigned)rows, kThreads>>>(a);
        return;
      }
      const int64_t merged = int64_t{slices} * k;
      auto* sc = (int64_t*)ws;
      auto* sv = reinterpret_cast<T*>(sc + rows * merged);
      TopkArgs<T> s{(const T*)in, sv, sc, nullptr, width, slice_width, slices, k, true};
      topk_rows<T><<<(unsigned)(rows * slices), kThreads>>>(s);
      TopkArgs<T> m{sv, values, indices, sc, merged, merged, 1, k, true};
      topk_rows<T><<<(unsigned)rows, kThreads>>>(m);
    };
    const float us = median_us(run, cold, 3, 25);
    std::vector<T> v(rows * k);
    std::vector<int64_t> ix(rows * k);
    CHECK(cudaMemcpy(v.data(), values, v.size() * sizeof(T), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(ix.data(), indices, ix.size() * 8, cudaMemcpyDeviceToHost));
    bool same = true;
    if (slices == 1) {
      v0 = v;
      i0 = ix;
    } else
      same = !memcmp(v.data(), v0.data(), v.size() * sizeof(T)) && ix == i0;
    printf("topk %-4s [%5ld,%6ld] k %4d slices %2d%s %8.1f us %3.0f%% of floor %s\n", name, rows, width, k, slices,
           slices == planned.slices ? "*" : " ", us, 100 * floor_us / us, same ? "same" : "DIFFERENT");
  }
  CHECK(cudaFree(values));
  CHECK(cudaFree(indices));
}
int main() {
  void *in, *out, *ws;
  size_t big = size_t(1) << 30;
  CHECK(cudaMalloc(&in, big));
  CHECK(cudaMalloc(&out, big));
  CHECK(cudaMalloc(&ws, 256 << 20));
  CHECK(cudaMalloc(&flushbuf, flush_words * 16));
  CHECK(cudaMalloc(&sink, 16));
  CHECK(cudaMemset(flushbuf, 1, flush_words * 16));
  copy_gbps = 2.0 * big / median_us([&] { cudaMemcpyAsync(out, in, big, cudaMemcpyDeviceToDevice); }) / 1e3;
  printf("copy %.0f GB/s\n", copy_gbps);
  struct C {
    int64_t rows, width;
    int k;
  };
  for (C c : std::vector<C>{{256, 262144, 256},
                            {256, 262144, 50},
                            {128, 262144, 256},
                            {256, 131072, 50},
                            {256, 131072, 256},
                            {256, 151936, 50},
                            {256, 151936, 256},
                            {256, 196608, 50},
                            {192, 262144, 50},
                            {512, 128256, 50},
                            {256, 128256, 50},
                            {128, 128256, 50},
                            {256, 50257, 50},
                            {4096, 50257, 50},
                            {512, 262144, 50},
                            {512, 262144, 256},
                            {64, 262144, 256}}) {
    cell<__nv_bfloat16>("bf16", c.rows, c.width, c.k, in, ws);
    cell<float>("f32", c.rows, c.width, c.k, in, ws);
  }
}
