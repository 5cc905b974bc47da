// How the row kernels (lib/src/dsls/cuda/rows.cuh) should hold a row, measured: for softmax,
// layer norm and RMS norm at the baseline shapes, the holder launch_rows() picks against
// a row in one 1024-thread block's registers and a row re-read from memory, on constant
// inputs, CUDA events, medians of 40 after 5 warm-ups; plus the copy bandwidth, what
// cudaMemset reaches (the write-only floor of outputs such as bmm's outer product),
// softmax over odd widths held shifted, and, last, few rows of odd widths held shifted
// against an element a thread (--few-rows: that section alone).
// Run on the GPU machine: build/bench/cuda_rows_variants [--few-rows]. docs/BENCHMARKS.md has results.
// It includes the kernels' sources, to reach their internal templates.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_timing.cuh"
#include "norm/cuda_kernels.cu"
#include "softmax/cuda_kernels.cu"

using namespace native_ops::cuda;
double copy_gbps;
RowClaims* claims;  // for persistent launches, one at a time
// Values in [1, 2) as bf16 or f16 pairs, varied, so that a wrong reduction changes the output.
__global__ void fill(uint16_t* p, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    p[i] = 0x3c00 | ((i * 2654435761u) >> 22 & 0x7f);
}
template <class T>
void shape(const char* name, int64_t rows, int64_t width, void* in, void* out, void* w, void* b, float* m, float* r) {
  constexpr int V = 16 / sizeof(T);
  double bytes = 2.0 * rows * width * sizeof(T);
  double floor_us = bytes / copy_gbps / 1e3;
  SoftmaxRows<T, V> sm{(const T*)in, (T*)out, width, false};
  NormRows<T, V> ln{(const T*)in, (T*)out, (const T*)w, (const T*)b, m, r, width, 1e-5f, true};
  NormRows<T, V> rn{(const T*)in, (T*)out, (const T*)w, nullptr, nullptr, r, width, 1e-5f, false};
  auto row = [&](const char* op, auto& o, ColumnReuse reuse) {
    using Op = std::decay_t<decltype(o)>;
    float chosen = median_us([&] { CHECK((cudaError_t)launch_rows<V>(o, rows, width, 0, reuse, claims)); });
    float block1024 = width / V <= 8192 ? median_us([&] {
      rows_kernel<Op, V, Holder::block_registers, RowGeometry<1024, 8>><<<rows, 1024>>>(o, rows, width, RowSchedule{});
    })
                                        : -1;
    float mem = median_us([&] {
      rows_kernel<Op, V, Holder::memory, RowGeometry<1024, 1>><<<rows, 1024>>>(o, rows, width, RowSchedule{});
    });
    printf(
        "%-8s %-5s [%6ld,%6ld] floor %6.1f | chosen %6.1f (%3.0f%%) | block1024 %6.1f (%3.0f%%) | memory %6.1f "
        "(%3.0f%%)\n",
        op, name, rows, width, floor_us, chosen, 100 * floor_us / chosen, block1024,
        block1024 > 0 ? 100 * floor_us / block1024 : 0, mem, 100 * floor_us / mem);
  };
  row("softmax", sm, ColumnReuse::per_row);
  row("layer", ln, column_reuse(true, w, b));  // as native_ops_cuda_norm_rows() chooses
  row("rms", rn, column_reuse(false, w, nullptr));
}

// Rows held shifted (odd widths) against aligned rows of the same span (4097 and 4104 both
// span 513 vectors and take the same rung), and the shifted kernel on aligned rows (lo 0) and
// on rows all one element past a boundary (lo 1): what the shifted holder costs by itself,
// and what rows starting at every offset add (docs/design/cuda-rows.md, "Odd widths").
void odd_widths(void* in, void* out) {
  using T = __nv_bfloat16;
  constexpr int V = 8;
  for (const int64_t rows : {2048, 8192, 32768}) {
    auto row = [&](const char* what, int64_t width, int offset, auto vec, auto shifted) {
      constexpr int kVec = decltype(vec)::value;
      constexpr bool kShifted = decltype(shifted)::value;
      SoftmaxRows<T, kVec> op{static_cast<const T*>(in) + offset, static_cast<T*>(out) + offset, width, false};
      const float us = median_us([&] { CHECK((cudaError_t)(launch_rows<kVec, kShifted>)(op, rows, width, 0)); });
      const double floor_us = 2.0 * rows * width * sizeof(T) / copy_gbps / 1e3;
      printf("softmax  bf16  [%6ld,%5ld] %-30s %7.1f us (%3.0f%% of the floor)\n", rows, width, what, us,
             100 * floor_us / us);
    };
    using Vector = std::integral_constant<int, V>;
    row("aligned", 4104, 0, Vector{}, std::false_type{});
    row("shifted holder, aligned rows", 4104, 0, Vector{}, std::true_type{});
    row("shifted holder, every row lo 1", 4104, 1, Vector{}, std::true_type{});
    row("shifted holder", 4097, 0, Vector{}, std::true_type{});
    row("an element a thread", 4097, 0, std::integral_constant<int, 1>{}, std::false_type{});
  }
}

// Where the rule hold_shifted() gives rows an element a thread (fewer than 1024 rows, rows
// of 1024-8192), softmax held shifted against an element a thread, from a cold L2 as the
// grid times it, each shifted output checked against the element kernel's.
template <class T>
void few_rows(const char* name, void* in, void* out, void* check, const uint4* flush, size_t flush_words, uint4* sink) {
  constexpr int V = 16 / sizeof(T);
  const auto cold = [&] { read_through<<<1024, 512>>>(flush, flush_words, sink); };
  for (const int64_t width : {1025, 2049, 4097, 8191}) {
    for (const int64_t rows : {1, 8, 64, 128, 256, 512, 1024, 2048}) {
      SoftmaxRows<T, V> shifted{static_cast<const T*>(in), static_cast<T*>(out), width, false};
      SoftmaxRows<T, 1> element{static_cast<const T*>(in), static_cast<T*>(check), width, false};
      const float shifted_us =
          median_us([&] { CHECK((cudaError_t)(launch_rows<V, true>)(shifted, rows, width, 0)); }, cold);
      const float element_us = median_us([&] { CHECK((cudaError_t)launch_rows<1>(element, rows, width, 0)); }, cold);
      std::vector<T> a(rows * width), b(rows * width);
      CHECK(cudaMemcpy(a.data(), out, a.size() * sizeof(T), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(b.data(), check, b.size() * sizeof(T), cudaMemcpyDeviceToHost));
      double worst = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        const double x = static_cast<float>(a[i]), y = static_cast<float>(b[i]);
        worst = std::max(worst, std::abs(x - y) / std::max(std::abs(y), 1e-30));
      }
      const double floor_us = 2.0 * rows * width * sizeof(T) / copy_gbps / 1e3;
      printf(
          "few rows softmax %-4s [%5ld,%5ld] shifted %6.1f us element %6.1f us element/shifted %.2f "
          "floor %5.1f us worst relative difference %.1e\n",
          name, rows, width, shifted_us, element_us, element_us / shifted_us, floor_us, worst);
    }
  }
}

int main(int argc, char** argv) {
  const bool few_rows_only = argc > 1 && std::string(argv[1]) == "--few-rows";
  size_t big = size_t(1) << 30;
  void *in, *out, *w, *b;
  float *m, *r;
  CHECK(cudaMalloc(&in, big));
  CHECK(cudaMalloc(&out, big));
  CHECK(cudaMalloc(&w, 1 << 20));
  CHECK(cudaMalloc(&b, 1 << 20));
  CHECK(cudaMalloc(&m, 1 << 20));
  CHECK(cudaMalloc(&r, 1 << 20));
  CHECK(cudaMalloc(&claims, sizeof(RowClaims)));
  fill<<<4096, 256>>>(static_cast<uint16_t*>(in), big / 2);
  CHECK(cudaMemset(w, 0x3c, 1 << 20));
  CHECK(cudaMemset(b, 0, 1 << 20));
  float cu = median_us([&] { cudaMemcpyAsync(out, in, big, cudaMemcpyDeviceToDevice); });
  copy_gbps = 2.0 * big / cu / 1e3;
  printf("copy %.0f GB/s\n", copy_gbps);
  for (size_t mb : {128, 256}) {
    float t = median_us([&] { cudaMemsetAsync(out, 1, mb << 20); });
    printf("memset %zu MB: %.1f us (%.0f%% of copy floor)\n", mb, t, 100 * (double(mb << 20) / copy_gbps / 1e3) / t);
  }
  if (!few_rows_only) {
    for (auto [rows, width] : std::vector<std::pair<int64_t, int64_t>>{
             {1024, 65536}, {4096, 32000}, {32768, 4096}, {65536, 1024}, {4096, 8192}, {64, 1024}, {256, 262144}}) {
      shape<__nv_bfloat16>("bf16", rows, width, in, out, w, b, m, r);
      shape<__half>("f16", rows, width, in, out, w, b, m, r);
      shape<float>("f32", rows, width, in, out, w, b, m, r);
    }
    odd_widths(in, out);
  }
  void* check;
  uint4* sink;
  CHECK(cudaMalloc(&check, 128 << 20));
  CHECK(cudaMalloc(&sink, sizeof(uint4)));
  const size_t flush_words = (size_t{256} << 20) / sizeof(uint4);
  const auto* flush = static_cast<const uint4*>(in) + flush_words;
  few_rows<__nv_bfloat16>("bf16", in, out, check, flush, flush_words, sink);
  few_rows<float>("f32", in, out, check, flush, flush_words, sink);
}
