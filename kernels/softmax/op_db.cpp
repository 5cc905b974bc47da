// The op database entries of _softmax and _log_softmax: what judges and measures their
// overrides (cpp at CPU; cuda at CUDA).
#include <limits>

#include <ATen/core/Tensor.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>

#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

using samples::Fill;
using samples::laid_out;
using samples::Layout;

constexpr const char* kLastDim = "_softmax_cpp_0";
constexpr int64_t kLastDimMinElements = 65536;

// The last-dimension kernel's domain: its cond must accept exactly these.
bool last_dim_handles(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return self.scalar_type() == at::kFloat && !half_to_float && self.dim() > 0 && (dim == -1 || dim == self.dim() - 1) &&
         self.numel() >= kLastDimMinElements && self.is_contiguous();
}

// What the GPU row kernels take (cuda and triton, softmax and log-softmax alike).
bool gpu_rows_handle(const at::Tensor& self, int64_t dim, bool half_to_float) {
  const auto dtype = self.scalar_type();
  return (dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16) && !half_to_float && self.dim() > 0 &&
         (dim == -1 || dim == self.dim() - 1) && self.numel() > 0 && self.is_contiguous();
}

// The cuda kernels' domain (`log`: log-softmax's), less where aten is at least as fast
// (speed.h).
bool cuda_rows_handle(const at::Tensor& self, int64_t dim, bool half_to_float, bool log) {
  if (!gpu_rows_handle(self, dim, half_to_float)) return false;
  const int64_t width = self.size(-1);
  return cuda_softmax_slower_than_aten(self.numel() / width, width, self.element_size(), log) == nullptr;
}
bool cuda_softmax_handles(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return cuda_rows_handle(self, dim, half_to_float, false);
}
bool cuda_log_softmax_handles(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return cuda_rows_handle(self, dim, half_to_float, true);
}

// The triton row kernels' domain: aligned rows of a multiple of 16 elements.
bool triton_rows_handle(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return gpu_rows_handle(self, dim, half_to_float) && self.size(-1) % 16 == 0 &&
         reinterpret_cast<uintptr_t>(self.const_data_ptr()) % 16 == 0;
}

// A node and the calls its cond must accept.
struct Domain {
  const char* node;
  bool (*handles)(const at::Tensor& self, int64_t dim, bool half_to_float);
};

std::vector<Sample> softmax_samples(c10::Device device, c10::ScalarType dtype, const Domain& domain) {
  std::vector<Sample> all;
  uint64_t seed = 100;
  auto add_tensor = [&](SampleClass sample_class, const at::Tensor& self, int64_t dim, const std::string& note) {
    std::vector<std::string> meant_for;
    if (domain.handles(self, dim, false)) meant_for.push_back(domain.node);
    all.push_back(
        {samples::describe(self) + ", dim " + std::to_string(dim) + note, sample_class, {self, dim, false}, meant_for});
  };
  auto add = [&](SampleClass sample_class, std::vector<int64_t> sizes, int64_t dim, Fill fill) {
    fill.seed = ++seed;
    add_tensor(sample_class, samples::make_tensor(sizes, dtype, device, fill), dim, "");
  };
  // Attention masks: -inf over whole runs of columns, as causal and padding masks write
  // them: the first 64 of every 8192 (a group of the triton chunked kernel's running
  // maxima that stays -inf in every chunk) and the last quarter.
  auto add_masked = [&](std::vector<int64_t> sizes) {
    Fill fill;
    fill.seed = ++seed;
    at::Tensor self = samples::make_tensor(sizes, dtype, device, fill);
    const int64_t width = sizes.back();
    const at::Tensor columns = at::arange(width, at::TensorOptions().dtype(at::kLong).device(device));
    self.masked_fill_(columns.remainder(8192).lt(64).logical_or(columns.ge(width - width / 4)),
                      -std::numeric_limits<double>::infinity());
    add_tensor(SampleClass::extreme_values, self, -1, ", masked columns -inf");
  };
  const Fill extreme = samples::with_extremes(dtype);
  Fill wide;  // exp() of large arguments: the max subtraction matters
  wide.low = -80;
  wide.high = 80;
  // Far from zero, at a width the triton persistent kernel holds: exp overflows unless the
  // max comes off first (its base-2 exponent folds the subtraction into an FFMA)
  Fill far;
  far.low = 30000;
  far.high = 60000;

  add(SampleClass::typical, {64, 1024}, -1, {});
  add(SampleClass::typical, {64, 1024}, 1, wide);
  add(SampleClass::typical, {8, 128}, -1, {});   // small: aten is as fast
  add(SampleClass::typical, {64, 1024}, 0, {});  // not the last dimension
  add(SampleClass::empty, {0, 16}, -1, {});
  add(SampleClass::zero_dim, {}, 0, {});
  add(SampleClass::one_element, {1, 1}, -1, {});
  add(SampleClass::one_element, {65536, 1}, -1, {});  // rows of one element
  add(SampleClass::odd_sizes, {5, 13109}, -1, {});
  add(SampleClass::odd_sizes, {4099, 17}, -1, {});
  add(SampleClass::odd_sizes, {3, 50257}, -1, {});   // cuda: rows off vector boundaries over a cluster
  add(SampleClass::odd_sizes, {2, 100003}, -1, {});  // cuda: the same, 16-bit partly in shared memory
  add(SampleClass::odd_sizes, {2, 151937}, -1, {});  // cuda: the same, 512-thread blocks (log-softmax: declined)
  {
    // A contiguous view one element into its storage: its rows and the output's are
    // unequally far from vector boundaries (cuda: one element at a time).
    Fill fill;
    fill.seed = ++seed;
    const at::Tensor storage = samples::make_tensor({3 * 1031 + 1}, dtype, device, fill);
    add_tensor(SampleClass::odd_sizes, storage.narrow(0, 1, 3 * 1031).view({3, 1031}), -1,
               ", one element into its storage");
  }
  add(SampleClass::typical, {1, 4096}, -1, {});  // decode rows
  add(SampleClass::typical, {8, 8192}, -1, {});
  add(SampleClass::typical, {32, 5120}, -1, {});
  add(SampleClass::large, {1024, 1024}, -1, {});
  add(SampleClass::large, {300, 16400}, -1, {});  // triton: persistent, more rows than SMs
  add(SampleClass::large, {4, 40000}, -1, {});    // cuda: rows over a cluster, slices not full
  add(SampleClass::large, {2, 65536}, -1, {});    // cuda: rows filling a cluster's slices in registers
  add(SampleClass::large, {3, 49168}, -1, {});    // triton: a cluster of 7, the last slice 16 columns
  add(SampleClass::large, {3, 73744}, -1, {});    // triton: a wide cluster of 10, the last slice 16 columns
  add(SampleClass::large, {2, 131072}, -1, {});   // cuda: 16-bit slices partly in shared memory; triton: 16 full
  add(SampleClass::large, {2, 100000}, -1, {});   // cuda: float32 over 512-thread cluster blocks
  add(SampleClass::large, {2, 262144}, -1, {});   // cuda: the widest rows a cluster holds, slices full
  add(SampleClass::large, {2, 1 << 19}, -1, {});  // cuda: left in memory, read twice
  add(SampleClass::transposed, {256, 512}, -1, laid_out(Layout::transposed));
  add(SampleClass::step_sliced, {128, 1024}, -1, laid_out(Layout::step_sliced));
  add(SampleClass::expanded, {128, 1024}, -1, laid_out(Layout::expanded));
  add(SampleClass::extreme_values, {64, 1024}, -1, extreme);
  add(SampleClass::extreme_values, {64, 1031}, -1, extreme);
  add(SampleClass::extreme_values, {40, 20000}, -1, far);  // triton: persistent rows
  add_masked({64, 1024});
  add_masked({8, 40000});
  add_masked({4, 65536});   // triton: the last two slices of a cluster all -inf
  add_masked({2, 131072});  // triton: the last four slices of a wide cluster all -inf
  if (device.is_cuda()) {   // the bounds of the cuda log-softmax cond, too large for the CPU sweeps
    add(SampleClass::odd_sizes, {1024, 1031}, -1, {});  // declines float32
    add(SampleClass::odd_sizes, {2048, 1031}, -1, {});  // held shifted: accepted
    add(SampleClass::odd_sizes, {256, 4097}, -1, {});   // few rows held shifted (16-bit: two vectors a thread)
    add(SampleClass::odd_sizes, {300, 8191}, -1, {});   // the same, eight vectors a thread
    add(SampleClass::large, {128, 262152}, -1, {});     // 16-bit rows left in memory, enough of them
    add(SampleClass::large, {32, 262152}, -1, {});      // float32 rows left in memory, enough of them
    add(SampleClass::typical, {255, 4096}, -1, {});     // declines 16-bit
    add(SampleClass::typical, {256, 16384}, -1, {});    // accepted
    add(SampleClass::typical, {8, 16392}, -1, {});      // accepted
  }
  return all;
}

std::vector<ErrorSample> softmax_errors(c10::Device device) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  std::vector<ErrorSample> errors = {
      {"dim out of range: f32[4,5], dim 2", {at::ones({4, 5}, f32), int64_t{2}, false}, "Dimension out of range"},
  };
  if (device.is_cpu()) {
    errors.push_back({"half_to_float on the CPU: f16[4,5], dim 1",
                      {at::ones({4, 5}, f32.dtype(at::kHalf)), int64_t{1}, true},
                      "softmax with half to float conversion is not supported on CPU"});
  }
  return errors;
}

Cost softmax_cost(const torch::jit::Stack& arguments) {
  const at::Tensor& self = arguments[0].toTensor();
  const double n = self.numel();
  return {2 * n * self.element_size(), 4 * n};  // read, write; subtract, exp, add, scale
}

BenchCase rows_bench_case(int64_t rows, int64_t width, c10::ScalarType dtype, c10::Device device,
                          std::vector<std::string> correct) {
  return {dtype_name(dtype) + " [" + std::to_string(rows) + "," + std::to_string(width) + "]",
          [rows, width, dtype, device] {
            return torch::jit::Stack{samples::make_tensor({rows, width}, dtype, device), int64_t{-1}, false};
          },
          std::move(correct)};
}

std::vector<BenchCase> softmax_bench_cases(c10::Device device) {
  std::vector<BenchCase> cases;
  for (const auto& [rows, width] : std::vector<std::pair<int64_t, int64_t>>{
           {16, 1024}, {64, 1024}, {256, 1024}, {4096, 1024}, {32, 32000}, {1024, 4096}}) {
    // Below 65536 elements the cond declines for speed only.
    cases.push_back(rows_bench_case(rows, width, at::kFloat, device, {kLastDim}));
  }
  return cases;
}

// The shapes of ../shared/notes/h200-baseline.md, and a small one where launch cost rules.
std::vector<BenchCase> rows_cuda_bench_cases(c10::Device device,
                                             const std::vector<std::pair<int64_t, int64_t>>& shapes) {
  std::vector<BenchCase> cases;
  for (const c10::ScalarType dtype : {at::kBFloat16, at::kHalf, at::kFloat}) {
    for (const auto& [rows, width] : shapes) cases.push_back(rows_bench_case(rows, width, dtype, device, {}));
  }
  return cases;
}

// Inputs in [-4, 4]: exponents well inside every dtype's range, as logits are.
ShapeGrid softmax_grid(c10::Device device) {
  return row_op_grid(device, [](int64_t rows, int64_t width, c10::ScalarType dtype, c10::Device device) {
    const at::Tensor input = at::empty({rows, width}, at::TensorOptions().dtype(dtype).device(device)).uniform_(-4, 4);
    return torch::jit::Stack{input, int64_t{-1}, false};
  });
}

}  // namespace

void register_softmax_op_db() {
  OpEntry entry;
  entry.op_symbol = "_softmax";
  entry.dsls = {"cpp"};
  entry.devices = {c10::DeviceType::CPU};
  entry.dtypes = {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16};
  entry.differentiable = true;
  entry.samples = [](c10::Device device, c10::ScalarType dtype) {
    return softmax_samples(device, dtype, {kLastDim, &last_dim_handles});
  };
  entry.error_samples = softmax_errors;
  entry.cost = softmax_cost;
  entry.bench_cases = softmax_bench_cases;
  entry.grid = softmax_grid;
  register_op_entry(entry);

  // The cuda and triton row kernels, for softmax and log-softmax: the same samples, on
  // the GPU, and the shapes of ../shared/notes/h200-baseline.md.
  entry.devices = {c10::DeviceType::CUDA};
  entry.dtypes = {at::kBFloat16, at::kHalf, at::kFloat};
  for (const char* dsl : {"cuda", "triton"}) {
    entry.dsls = {dsl};
    const std::string tag(dsl);
    const Domain softmax{tag == "cuda" ? "_softmax_cuda_0" : "_softmax_triton_0",
                         tag == "cuda" ? &cuda_softmax_handles : &triton_rows_handle};
    const Domain log_softmax{tag == "cuda" ? "_log_softmax_cuda_0" : "_log_softmax_triton_0",
                             tag == "cuda" ? &cuda_log_softmax_handles : &triton_rows_handle};
    entry.op_symbol = "_softmax";
    entry.samples = [softmax](c10::Device device, c10::ScalarType dtype) {
      return softmax_samples(device, dtype, softmax);
    };
    // [1024,128256]: logits over Llama 3's vocabulary (rows over a wide cluster in triton)
    entry.bench_cases = [](c10::Device device) {
      return rows_cuda_bench_cases(
          device, {{64, 1024}, {32768, 4096}, {4096, 32000}, {65536, 1024}, {1024, 65536}, {1024, 128256}});
    };
    register_op_entry(entry);

    entry.op_symbol = "_log_softmax";
    entry.samples = [log_softmax](c10::Device device, c10::ScalarType dtype) {
      return softmax_samples(device, dtype, log_softmax);
    };
    entry.bench_cases = [](c10::Device device) {
      return rows_cuda_bench_cases(device, {{64, 1024}, {32768, 4096}, {4096, 32000}, {1024, 128256}});
    };
    register_op_entry(entry);
  }
}

}  // namespace native_ops::kernels
