// The cuda DSL's kernels library by itself, without PyTorch: its entry points on device
// memory against references computed on the CPU in double, at shapes that take each rung of
// the row ladder (a warp, a block, a cluster of 8, the persistent and the re-reading holders,
// rows held shifted, an element a thread) and each of argmax's and topk's plans. ctest runs
// it twice: as built, and with CUDA_FORCE_PTX_JIT=1, where the driver compiles the library's
// compute_80 PTX, as on a GPU its sm_90 code does not run on; there the kernels must take none
// of their sm_90 paths (runs_sm90_code(), dsls/cuda/common.cuh). PyTorch's own kernels stop
// under it ("no kernel image is available"), so only a test without them checks that path.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "argmax/cuda_abi.h"
#include "norm/cuda_abi.h"
#include "softmax/cuda_abi.h"
#include "softmax_backward/cuda_abi.h"
#include "topk/cuda_abi.h"

namespace {

bool ptx_forced() {
  const char* value = std::getenv("CUDA_FORCE_PTX_JIT");
  return value != nullptr && std::string(value) == "1";
}

float to_float(float x) { return x; }
float to_float(__half x) { return __half2float(x); }
float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T>
T from_float(float x) {
  if constexpr (std::is_same_v<T, __half>) return __float2half(x);
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16(x);
  if constexpr (std::is_same_v<T, float>) return x;
}

template <class T>
constexpr int dtype_code() {
  if constexpr (std::is_same_v<T, __half>) return kNativeOpsFloat16;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return kNativeOpsBFloat16;
  return kNativeOpsFloat32;
}

// The relative error an output may have: a few roundings of the dtype, and float's
// accumulation over a row for float32.
template <class T>
constexpr double tolerance() {
  if constexpr (std::is_same_v<T, __half>) return 0x1p-9;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return 0x1p-7;
  return 2e-5;
}

// The spacing of the dtype's subnormals, where float16's small probabilities lie: the
// absolute error an output may have besides its relative one.
template <class T>
constexpr double subnormal_spacing() {
  return std::is_same_v<T, __half> ? 0x1p-24 : 0.0;
}

template <class T>
const char* dtype_name() {
  if constexpr (std::is_same_v<T, __half>) return "float16";
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return "bfloat16";
  return "float32";
}

// Values in [-4, 4), a multiple of 1/64 (ties for argmax and topk in every dtype), varied by
// position and seed.
template <class T>
std::vector<T> values(size_t count, uint64_t seed) {
  std::vector<T> result(count);
  for (size_t i = 0; i < count; ++i) {
    uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 31)) * 0x94d049bb133111ebull;
    result[i] = from_float<T>(static_cast<float>(static_cast<int>(z >> 55) - 256) / 64.0f);
  }
  return result;
}

class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) {
    if (cudaMalloc(&data_, std::max<size_t>(bytes, 16)) != cudaSuccess) data_ = nullptr;
  }
  template <class T>
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size() * sizeof(T)) {
    if (data_ != nullptr) cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data_); }
  template <class T = void>
  T* get() const {
    return static_cast<T*>(data_);
  }
  template <class T>
  std::vector<T> read(size_t count) const {
    std::vector<T> host(count);
    cudaMemcpy(host.data(), data_, count * sizeof(T), cudaMemcpyDeviceToHost);
    return host;
  }

 private:
  void* data_ = nullptr;
};

struct Shape {
  int64_t rows, width;
};

std::string describe(const char* dtype, Shape shape) {
  return std::string(dtype) + " [" + std::to_string(shape.rows) + ", " + std::to_string(shape.width) + "]";
}

// Counts the outputs further from `expected` than the dtype's tolerance times |expected|
// plus slack[i] (and the dtype's subnormal spacing), reporting the first few.
template <class T>
int64_t mismatches(const std::vector<T>& got, const std::vector<double>& expected, const std::vector<double>& slack,
                   const std::string& what) {
  int64_t count = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double value = to_float(got[i]);
    const double allowed = tolerance<T>() * std::abs(expected[i]) + slack[i] + subnormal_spacing<T>();
    if (std::abs(value - expected[i]) <= allowed) continue;
    if (count++ < 3) ADD_FAILURE() << what << ": element " << i << " is " << value << ", expected " << expected[i];
  }
  return count;
}

// The error of a sum of a row's terms in float, relative to the sum of their magnitudes: it
// is not relative to the sum itself, which cancellation makes as small as it likes.
constexpr double kFloatSumError = 1e-5;

class KernelsLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      cudaGetLastError();
      GTEST_SKIP() << "no CUDA device here: the kernels library's entry points run on one";
    }
    library_ = dlopen(NATIVE_OPS_CUDA_KERNELS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library_, nullptr) << dlerror();
  }
  void TearDown() override {
    if (library_ != nullptr) dlclose(library_);
  }

  template <class Fn>
  Fn entry(const char* symbol) {
    void* address = dlsym(library_, symbol);
    EXPECT_NE(address, nullptr) << symbol;
    return reinterpret_cast<Fn>(address);
  }

  // Checks a launch's status and that the kernel ran to its end.
  static void expect_ran(int status, const std::string& what) {
    EXPECT_EQ(status, 0) << what << ": " << cudaGetErrorString(static_cast<cudaError_t>(status));
    const cudaError_t synchronized = cudaDeviceSynchronize();
    ASSERT_EQ(synchronized, cudaSuccess) << what << ": " << cudaGetErrorString(synchronized);
  }

  template <class T>
  void softmax(const std::vector<Shape>& shapes) {
    const auto softmax_rows = entry<NativeOpsSoftmaxRowsFn>(NATIVE_OPS_SOFTMAX_ROWS_SYMBOL);
    for (const Shape shape : shapes) {
      for (const int log : {0, 1}) {
        const std::string what = std::string(log ? "log_softmax " : "softmax ") + describe(dtype_name<T>(), shape);
        const size_t count = shape.rows * shape.width;
        const std::vector<T> in = values<T>(count, shape.width);
        const DeviceBuffer in_device(in), out_device(count * sizeof(T));
        expect_ran(
            softmax_rows(dtype_code<T>(), log, in_device.get(), out_device.get(), shape.rows, shape.width, nullptr),
            what);
        std::vector<double> expected(count), slack(count, 0.0);
        for (int64_t r = 0; r < shape.rows; ++r) {
          const T* row = &in[r * shape.width];
          double max = -INFINITY, sum = 0;
          for (int64_t c = 0; c < shape.width; ++c) max = std::max<double>(max, to_float(row[c]));
          for (int64_t c = 0; c < shape.width; ++c) sum += std::exp(to_float(row[c]) - max);
          for (int64_t c = 0; c < shape.width; ++c) {
            const double shifted = to_float(row[c]) - max;
            expected[r * shape.width + c] = log ? shifted - std::log(sum) : std::exp(shifted) / sum;
          }
        }
        EXPECT_EQ(mismatches(out_device.read<T>(count), expected, slack, what), 0) << what;
      }
    }
  }

  template <class T>
  void softmax_backward(const std::vector<Shape>& shapes) {
    const auto backward_rows = entry<NativeOpsSoftmaxBackwardRowsFn>(NATIVE_OPS_SOFTMAX_BACKWARD_ROWS_SYMBOL);
    for (const Shape shape : shapes) {
      for (const int log : {0, 1}) {
        const std::string what =
            std::string(log ? "log_softmax backward " : "softmax backward ") + describe(dtype_name<T>(), shape);
        const size_t count = shape.rows * shape.width;
        // The forward's output: probabilities, or their logs.
        std::vector<T> out = values<T>(count, 2 * shape.width + 1);
        for (T& x : out) {
          const float p = (to_float(x) + 4.0f) / 8.0f / static_cast<float>(shape.width);
          x = from_float<T>(log ? std::log(p + 1e-9f) : p);
        }
        const std::vector<T> grad_out = values<T>(count, 2 * shape.width);
        const DeviceBuffer out_device(out), grad_out_device(grad_out), grad_in_device(count * sizeof(T));
        expect_ran(backward_rows(dtype_code<T>(), log, grad_out_device.get(), out_device.get(), grad_in_device.get(),
                                 shape.rows, shape.width, nullptr),
                   what);
        // As aten computes it (and the kernel): g * y rounded to T, then less y * sum.
        const auto product = [](T g, T y) { return double{to_float(from_float<T>(to_float(g) * to_float(y)))}; };
        std::vector<double> expected(count), slack(count);
        for (int64_t r = 0; r < shape.rows; ++r) {
          const size_t first = r * shape.width;
          double sum = 0, magnitudes = 0;  // of the terms of the row's sum
          for (int64_t c = 0; c < shape.width; ++c) {
            const double term = log ? to_float(grad_out[first + c]) : product(grad_out[first + c], out[first + c]);
            sum += term;
            magnitudes += std::abs(term);
          }
          for (int64_t c = 0; c < shape.width; ++c) {
            const double g = to_float(grad_out[first + c]), y = to_float(out[first + c]);
            const double p = log ? std::exp(y) : y;
            expected[first + c] = log ? g - p * sum : product(grad_out[first + c], out[first + c]) - y * sum;
            slack[first + c] = kFloatSumError * (log ? std::abs(g) + p * magnitudes : y * (std::abs(g) + magnitudes));
          }
        }
        EXPECT_EQ(mismatches(grad_in_device.read<T>(count), expected, slack, what), 0) << what;
      }
    }
  }

  template <class T>
  void norm(const std::vector<Shape>& shapes) {
    const auto norm_rows = entry<NativeOpsNormRowsFn>(NATIVE_OPS_NORM_ROWS_SYMBOL);
    for (const Shape shape : shapes) {
      for (const int centered : {1, 0}) {
        const std::string what = std::string(centered ? "layer_norm " : "rms_norm ") + describe(dtype_name<T>(), shape);
        const size_t count = shape.rows * shape.width;
        std::vector<T> in = values<T>(count, 3 * shape.width);
        for (T& x : in) x = from_float<T>(to_float(x) + 1.0f);  // a mean away from 0
        std::vector<T> weight = values<T>(shape.width, 3 * shape.width + 1);
        for (T& x : weight) x = from_float<T>(1.0f + to_float(x) / 8.0f);
        const std::vector<T> bias = values<T>(shape.width, 3 * shape.width + 2);
        const DeviceBuffer in_device(in), weight_device(weight), bias_device(bias), out_device(count * sizeof(T)),
            mean_device(shape.rows * sizeof(float)), rstd_device(shape.rows * sizeof(float)),
            workspace(NATIVE_OPS_NORM_ROWS_WORKSPACE_BYTES);
        constexpr float kEps = 1e-5f;
        expect_ran(norm_rows(dtype_code<T>(), centered, in_device.get(), weight_device.get(),
                             centered ? bias_device.get() : nullptr, out_device.get(),
                             centered ? mean_device.get<float>() : nullptr, rstd_device.get<float>(), shape.rows,
                             shape.width, kEps, centered ? workspace.get() : nullptr, nullptr),
                   what);
        std::vector<double> expected(count), slack(count, tolerance<T>()), expected_rstd(shape.rows),
            expected_mean(shape.rows);
        for (int64_t r = 0; r < shape.rows; ++r) {
          const T* row = &in[r * shape.width];
          double mean = 0, squares = 0;
          if (centered) {
            for (int64_t c = 0; c < shape.width; ++c) mean += to_float(row[c]);
            mean /= shape.width;
          }
          for (int64_t c = 0; c < shape.width; ++c) squares += std::pow(to_float(row[c]) - mean, 2);
          const double rstd = 1 / std::sqrt(squares / shape.width + kEps);
          expected_mean[r] = mean;
          expected_rstd[r] = rstd;
          for (int64_t c = 0; c < shape.width; ++c) {
            expected[r * shape.width + c] =
                (to_float(row[c]) - mean) * rstd * to_float(weight[c]) + (centered ? to_float(bias[c]) : 0.0);
          }
        }
        EXPECT_EQ(mismatches(out_device.read<T>(count), expected, slack, what), 0) << what;
        const std::vector<double> statistic_slack(shape.rows, 0.0);
        EXPECT_EQ(mismatches(rstd_device.read<float>(shape.rows), expected_rstd, statistic_slack, what + " rstd"), 0);
        if (centered) {
          const std::vector<double> mean_slack(shape.rows, tolerance<float>());
          EXPECT_EQ(mismatches(mean_device.read<float>(shape.rows), expected_mean, mean_slack, what + " mean"), 0);
        }
      }
    }
  }

  // The first column of each row's maximum (or minimum), the kernels' order of ties.
  template <class T>
  void arg_extreme(const std::vector<Shape>& shapes) {
    const auto arg_extreme_rows = entry<NativeOpsArgExtremeRowsFn>(NATIVE_OPS_ARG_EXTREME_ROWS_SYMBOL);
    for (const Shape shape : shapes) {
      for (const int largest : {1, 0}) {
        const std::string what = std::string(largest ? "argmax " : "argmin ") + describe(dtype_name<T>(), shape);
        const std::vector<T> in = values<T>(shape.rows * shape.width, 4 * shape.width);
        const DeviceBuffer in_device(in), values_device(shape.rows * sizeof(T)),
            indices_device(shape.rows * sizeof(int64_t));
        expect_ran(arg_extreme_rows(dtype_code<T>(), largest, in_device.get(), values_device.get(),
                                    indices_device.get<int64_t>(), shape.rows, shape.width, nullptr),
                   what);
        const std::vector<int64_t> indices = indices_device.read<int64_t>(shape.rows);
        for (int64_t r = 0; r < shape.rows; ++r) {
          const T* row = &in[r * shape.width];
          const auto better = [&](T a, T b) { return largest ? to_float(a) < to_float(b) : to_float(b) < to_float(a); };
          const int64_t expected = std::max_element(row, row + shape.width, better) - row;
          EXPECT_EQ(indices[r], expected) << what << " row " << r;
        }
      }
    }
  }

  // Each row's k largest (or smallest) by value, then by column, sorted.
  template <class T>
  void topk(const std::vector<Shape>& shapes, const std::vector<int64_t>& ks) {
    const auto topk_rows = entry<NativeOpsTopkRowsFn>(NATIVE_OPS_TOPK_ROWS_SYMBOL);
    const auto topk_workspace = entry<NativeOpsTopkWorkspaceFn>(NATIVE_OPS_TOPK_WORKSPACE_SYMBOL);
    for (size_t s = 0; s < shapes.size(); ++s) {
      const Shape shape = shapes[s];
      const int64_t k = ks[s];
      for (const int largest : {1, 0}) {
        const std::string what = std::string(largest ? "topk largest " : "topk smallest ") +
                                 describe(dtype_name<T>(), shape) + " k " + std::to_string(k);
        const std::vector<T> in = values<T>(shape.rows * shape.width, 5 * shape.width + k);
        int64_t bytes = -1;
        ASSERT_EQ(topk_workspace(dtype_code<T>(), largest, shape.rows, shape.width, k, &bytes), 0) << what;
        const DeviceBuffer in_device(in), values_device(shape.rows * k * sizeof(T)),
            indices_device(shape.rows * k * sizeof(int64_t)), workspace(bytes);
        expect_ran(
            topk_rows(dtype_code<T>(), largest, in_device.get(), values_device.get(), indices_device.get<int64_t>(),
                      shape.rows, shape.width, k, bytes > 0 ? workspace.get() : nullptr, bytes, nullptr),
            what);
        const std::vector<int64_t> indices = indices_device.read<int64_t>(shape.rows * k);
        int64_t wrong = 0;
        std::vector<int64_t> order(shape.width);
        for (int64_t r = 0; r < shape.rows; ++r) {
          const T* row = &in[r * shape.width];
          std::iota(order.begin(), order.end(), 0);
          std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
            const float x = to_float(row[a]), y = to_float(row[b]);
            return x != y ? (largest ? x > y : x < y) : a < b;
          });
          for (int64_t j = 0; j < k; ++j) {
            if (indices[r * k + j] != order[j] && wrong++ < 3) {
              ADD_FAILURE() << what << " row " << r << " place " << j << ": column " << indices[r * k + j]
                            << ", expected " << order[j];
            }
          }
        }
        EXPECT_EQ(wrong, 0) << what;
      }
    }
  }

  void* library_ = nullptr;
};

// Rows narrow enough for a warp (with 1024 rows or more) or a block, rows wide enough for a
// cluster of 8 on sm_90 (a block of 1024 threads, or re-read from memory, without it),
// wider than any holder, and odd widths (held shifted).
const std::vector<Shape> kRowShapes = {{3, 4096},  {1500, 1000}, {1100, 4097}, {2, 50000},
                                       {4, 50257}, {2, 151936},  {2, 262144},  {1, 300000}};

TEST_F(KernelsLibrary, SoftmaxMatchesTheReference) {
  softmax<float>(kRowShapes);
  softmax<__nv_bfloat16>(kRowShapes);
  softmax<__half>({{3, 4096}, {2, 50000}, {4, 50257}, {2, 262144}});
}

TEST_F(KernelsLibrary, SoftmaxBackwardMatchesTheReference) {
  // Two row operands: 16-bit rows up to 262144 wide on a cluster of 1024-thread blocks.
  const std::vector<Shape> shapes = {{3, 4096}, {1100, 4097}, {2, 50000}, {2, 200000}, {1, 300000}};
  softmax_backward<float>(shapes);
  softmax_backward<__nv_bfloat16>(shapes);
}

TEST_F(KernelsLibrary, NormsMatchTheReference) {
  // Also 16-bit rows of 65536 in the layer norm's persistent clusters (rows enough for 8 a
  // cluster), and an even count of rows, which RMS norm's clusters take two a block.
  norm<float>({{3, 4096}, {1100, 4097}, {2, 50000}, {4, 50257}, {2, 262144}});
  norm<__nv_bfloat16>({{3, 4096}, {2, 4097}, {4, 50000}, {2, 262144}, {1100, 65536}});
}

TEST_F(KernelsLibrary, ArgmaxMatchesTheReference) {
  // Decode rows over vocabularies take a cluster a row on sm_90.
  const std::vector<Shape> shapes = {{3, 1000}, {1, 151936}, {4, 128256}, {8, 50257}, {64, 50257}, {1, 262144}};
  arg_extreme<float>(shapes);
  arg_extreme<__nv_bfloat16>(shapes);
  arg_extreme<__half>({{1, 151936}, {64, 50257}});
}

TEST_F(KernelsLibrary, TopkMatchesTheReference) {
  // A cluster a row (sm_90), rows split over blocks through the workspace, a block a row,
  // the exact path's largest k.
  const std::vector<Shape> shapes = {{1, 50257},  {8, 128256},  {1, 32000},  {64, 50257}, {2, 151936},
                                     {1, 262144}, {16, 128256}, {1, 128256}, {4, 1000},   {3, 5000}};
  const std::vector<int64_t> ks = {256, 50, 1, 256, 256, 1, 50, 32, 7, NATIVE_OPS_TOPK_MAX_K};
  topk<float>(shapes, ks);
  topk<__nv_bfloat16>(shapes, ks);
}

// The plan topk's workspace entry point reports follows the code the driver loaded: a
// cluster a row (no workspace) for a decode row only where the sm_90 code runs.
TEST_F(KernelsLibrary, TopkPlanFollowsTheCodeThatRuns) {
  cudaDeviceProp properties{};
  ASSERT_EQ(cudaGetDeviceProperties(&properties, 0), cudaSuccess);
  const bool sm90_code = properties.major == 9 && !ptx_forced();
  const auto topk_workspace = entry<NativeOpsTopkWorkspaceFn>(NATIVE_OPS_TOPK_WORKSPACE_SYMBOL);
  int64_t bytes = -1;
  ASSERT_EQ(topk_workspace(kNativeOpsBFloat16, 1, 1, 50257, 256, &bytes), 0);
  EXPECT_EQ(bytes == 0, sm90_code) << properties.name << ", CUDA_FORCE_PTX_JIT " << (ptx_forced() ? "1" : "unset");
}

}  // namespace
