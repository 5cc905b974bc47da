// The op database entry of topk: what judges and measures its cuda override.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/floor.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/masked_fill.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/sort.h>

#include <limits>

#include "cuda_abi.h"
#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

using samples::Fill;
using samples::laid_out;
using samples::Layout;

// The cuda kernel's domain: contiguous, not empty, over the last dimension, 1 <= k <=
// min(width, NATIVE_OPS_TOPK_MAX_K), but where aten is faster (speed.h).
bool cuda_handles(const at::Tensor& self, int64_t k, int64_t dim) {
  return self.dim() > 0 && self.numel() > 0 && self.is_contiguous() && (dim == -1 || dim == self.dim() - 1) && k >= 1 &&
         k <= self.size(-1) && k <= NATIVE_OPS_TOPK_MAX_K &&
         cuda_topk_slower_than_aten(self.numel() / self.size(-1), self.size(-1), k, self.element_size()) == nullptr;
}

// Which of equal elements topk returns, and the order of unsorted results, are aten's to
// choose: sorted results keep their order (the values must be sorted; the elements the
// indices gather must be those values), unsorted ones are sorted first. So are results
// holding NaN: aten selects every NaN above the numbers, but its sort of the selection
// puts a NaN with the sign bit set first for some k and last for others (its small sorts
// compare values, its radix sort the bits).
torch::jit::Stack topk_canonical(const torch::jit::Stack& arguments, const torch::jit::Stack& outputs) {
  const at::Tensor& self = arguments[0].toTensor();
  const int64_t dim = arguments[2].toInt();
  const bool largest = arguments[3].toBool();
  const bool sorted = arguments[4].toBool();
  const at::Tensor gathered =
      self.dim() == 0 ? self.expand_as(outputs[1].toTensor()).clone() : self.gather(dim, outputs[1].toTensor());
  const bool holds_nan = outputs[0].toTensor().isnan().any().item<bool>();
  auto order = [&](const at::Tensor& t) {
    return (sorted && !holds_nan) || t.dim() == 0 ? t : std::get<0>(t.sort(dim, largest));
  };
  return {order(outputs[0].toTensor()), order(gathered)};
}

struct Call {
  std::vector<int64_t> sizes;
  int64_t k = 50;
  int64_t dim = -1;
  bool largest = true;
  bool sorted = true;
  Fill fill{};
  double distinct = 0;  // > 0: the values floor(x / distinct), few distinct ones (ties)
  at::Tensor (*adjust)(const at::Tensor&) = nullptr;
};

// The cuda kernel samples runs of 32 columns every width / 128: raised by 64, the sampled
// columns of a row 8192 wide hold the largest half of it, and a threshold drawn from them
// is reached by fewer than k elements, which sends the row to the exact path. Rows are many
// here: a few rows of 8192 would be split into slices of 4096, which the sample reads whole.
at::Tensor raise_sampled_columns(const at::Tensor& self) {
  const at::Tensor column = at::arange(self.size(-1), self.options().dtype(at::kLong));
  return self + (column.remainder(self.size(-1) / 128) < 32).to(self.scalar_type()) * 64;
}

// Every 8th of the columns the sample skips, raised by 64: several hundred elements reach
// the threshold it gives where k is 10, so the kernel selects among its candidates before
// it sorts them (rows are many: few would be split).
at::Tensor raise_unsampled_columns(const at::Tensor& self) {
  const at::Tensor column = at::arange(self.size(-1), self.options().dtype(at::kLong));
  const at::Tensor unsampled = column.remainder(self.size(-1) / 128) >= 32;
  return self + (unsampled & (column.remainder(8) == 0)).to(self.scalar_type()) * 64;
}

// Decode rows (few and wide) are taken a cluster a row, whose sample is the columns
// i * width / 2048: raised by 64, they hold the largest 2048 of a row 20 x 2048 wide, and the
// threshold they give is reached by fewer than k, which sends the row to the exact path.
at::Tensor raise_cluster_sampled_columns(const at::Tensor& self) {
  const at::Tensor column = at::arange(self.size(-1), self.options().dtype(at::kLong));
  return self + (column.remainder(self.size(-1) / 2048) == 0).to(self.scalar_type()) * 64;
}

// A masked row: all but every 1600th element -inf (20 finite of 32000): the k-th ties with
// most of the row.
at::Tensor mask_all_but_few(const at::Tensor& self) {
  const at::Tensor column = at::arange(self.size(-1), self.options().dtype(at::kLong));
  return self.masked_fill(column.remainder(1600) != 0, -std::numeric_limits<double>::infinity());
}

std::vector<Sample> topk_samples(c10::Device device, c10::ScalarType dtype) {
  std::vector<Sample> all;
  uint64_t seed = 1100;
  auto add = [&](SampleClass sample_class, Call call) {
    call.fill.seed = ++seed;
    at::Tensor self = samples::make_tensor(call.sizes, dtype, device, call.fill);
    if (call.distinct > 0) self = at::floor(self / call.distinct);
    if (call.adjust != nullptr) self = call.adjust(self);
    std::vector<std::string> meant_for;
    if (cuda_handles(self, call.k, call.dim)) meant_for.push_back("topk_cuda_0");
    all.push_back({samples::describe(self) + c10::str(", k ", call.k, ", dim ", call.dim,
                                                      call.largest ? ", largest" : ", smallest",
                                                      call.sorted ? ", sorted" : ", unsorted"),
                   sample_class,
                   {self, call.k, call.dim, call.largest, call.sorted},
                   meant_for});
  };
  Fill logits;  // a vocabulary head's spread
  logits.low = -8;
  logits.high = 8;
  add(SampleClass::typical, {{64, 1000}, 50, -1, true, true, logits});
  add(SampleClass::typical, {{64, 1000}, 50, -1, false, true, logits});
  add(SampleClass::typical, {{64, 1000}, 50, -1, true, false, logits});
  add(SampleClass::typical, {{8, 4096}, 1, -1, true, true, logits});
  add(SampleClass::typical, {{4, 4096}, 1024, -1, true, true, logits});  // the largest k, sorted in shared memory
  add(SampleClass::typical, {{2, 3, 500}, 20, 2, true, true, logits});
  add(SampleClass::typical, {{1, 128256}, 50, -1, true, true, logits});       // a decode step's vocabulary
  add(SampleClass::typical, {{4, 32000}, 128, -1, false, true, logits});      // decode rows: a cluster a row
  add(SampleClass::typical, {{2, 50257}, 200, -1, false, false, Fill{}, 4});  // ties past the cluster's pool
  add(SampleClass::typical, {{2, 40960}, 200, -1, true, true, logits, 0, raise_cluster_sampled_columns});
  add(SampleClass::typical, {{2, 32000}, 150, -1, true, true, logits, 0, mask_all_but_few});
  add(SampleClass::typical, {{2, 151936}, 256, -1, true, true, logits});  // the cluster's denser sample
  add(SampleClass::typical, {{3, 100003}, 256, -1, false, false, logits});
  add(SampleClass::typical, {{3, 50257}, 1, -1, true, true, logits});       // k 1 over rows a cluster takes
  add(SampleClass::typical, {{2, 128256}, 1, -1, false, true, Fill{}, 4});  // ties at the extreme: the first column
  add(SampleClass::typical, {{16, 100003}, 1, -1, true, true, logits});     // k 1 over a second wave of clusters
  add(SampleClass::typical, {{2, 200003}, 1, -1, true, true, logits});      // k 1 past the cluster's registers
  add(SampleClass::typical, {{24, 262144}, 1, -1, true, true, logits});     // k 1 on few wide rows: two launches
  add(SampleClass::typical, {{64, 1000}, 50, 0, true, true, logits});       // not the last dimension: aten
  add(SampleClass::typical, {{16, 2000}, 300, -1, true, true, Fill{}, 4});  // few values: ties at the k-th
  add(SampleClass::typical, {{16, 2000}, 300, -1, false, false, Fill{}, 4});
  add(SampleClass::typical, {{3, 20001}, 50, -1, true, true, Fill{}, 1000});  // every element equal
  add(SampleClass::typical, {{1200, 8192}, 1000, -1, true, true, logits, 0, raise_sampled_columns});
  add(SampleClass::typical, {{300, 8192}, 10, -1, true, true, logits, 0, raise_unsampled_columns});
  // A quarter of each row ties at the largest (smallest) value: more candidates than the
  // kernel's queue holds, and than the select among them keeps room for.
  add(SampleClass::typical, {{300, 8192}, 10, -1, true, true, Fill{}, 4.5});
  add(SampleClass::typical, {{300, 8192}, 10, -1, false, false, Fill{}, 4.5});
  add(SampleClass::empty, {{0, 100}, 5});
  add(SampleClass::zero_dim, {{}, 1, -1});
  add(SampleClass::one_element, {{1, 1}, 1});
  add(SampleClass::one_element, {{300, 1}, 1, -1, false});
  add(SampleClass::odd_sizes, {{5, 50257}, 50, -1, true, true, logits});  // rows off the 16-byte boundary
  add(SampleClass::odd_sizes, {{7, 13}, 13, -1, true, false, logits});    // k the whole row
  add(SampleClass::large, {{64, 32000}, 256, -1, true, true, logits});
  add(SampleClass::large, {{4, 262144}, 100, -1, false, true, logits});
  add(SampleClass::large, {{16, 100000}, 2000, -1, true, true, logits});  // k above 1024: aten
  add(SampleClass::transposed, {{64, 512}, 10, -1, true, true, laid_out(Layout::transposed)});
  add(SampleClass::step_sliced, {{64, 512}, 10, -1, true, true, laid_out(Layout::step_sliced)});
  add(SampleClass::expanded, {{64, 512}, 10, -1, true, true, laid_out(Layout::expanded)});
  add(SampleClass::extreme_values, {{64, 1031}, 40, -1, true, true, samples::with_extremes(dtype)});
  add(SampleClass::extreme_values, {{64, 1031}, 40, -1, false, true, samples::with_extremes(dtype)});
  // k 1 largest runs the arg-extreme kernel (NaN first), smallest topk's own (NaN last).
  add(SampleClass::extreme_values, {{64, 1031}, 1, -1, true, true, samples::with_extremes(dtype)});
  add(SampleClass::extreme_values, {{64, 1031}, 1, -1, false, true, samples::with_extremes(dtype)});
  add(SampleClass::extreme_values, {{1, 65536}, 128, -1, true, true, samples::with_extremes(dtype)});
  add(SampleClass::extreme_values, {{2, 65536}, 1, -1, true, true, samples::with_extremes(dtype)});
  add(SampleClass::extreme_values, {{2, 65536}, 1, -1, false, true, samples::with_extremes(dtype)});
  return all;
}

// aten's checks (seen on the H200); the cond declines each call, so aten raises them.
std::vector<ErrorSample> topk_errors(c10::Device device) {
  const at::Tensor self = at::ones({4, 5}, at::TensorOptions().dtype(at::kFloat).device(device));
  return {
      {"k 6 of rows of 5", {self, int64_t{6}, int64_t{-1}, true, true}, "selected index k out of range"},
  };
}

// The input read once, the values and indices written.
Cost topk_cost(const torch::jit::Stack& arguments) {
  const at::Tensor& self = arguments[0].toTensor();
  const double width = self.dim() == 0 ? 1 : static_cast<double>(self.size(-1));
  const double rows = width == 0 ? 0 : static_cast<double>(self.numel()) / width;
  const double k = static_cast<double>(arguments[1].toInt());
  return {static_cast<double>(self.nbytes()) + rows * k * (self.element_size() + 8), static_cast<double>(self.numel())};
}

torch::jit::Stack topk_arguments(int64_t rows, int64_t width, int64_t k, c10::ScalarType dtype, c10::Device device) {
  const at::Tensor self = at::empty({rows, width}, at::TensorOptions().dtype(dtype).device(device)).uniform_(-8, 8);
  return {self, k, int64_t{-1}, true, true};
}

// Sampling from vocabularies (serving: decode rows; training metrics: many rows).
std::vector<BenchCase> topk_bench_cases(c10::Device device) {
  std::vector<BenchCase> cases;
  for (const c10::ScalarType dtype : {at::kBFloat16, at::kFloat}) {
    for (const auto& [rows, width, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {4096, 128256, 50}, {64, 128256, 50}, {1, 128256, 50}, {4096, 50257, 50}, {256, 262144, 256}}) {
      cases.push_back({dtype_name(dtype) + c10::str(" [", rows, ",", width, "] k ", k),
                       [=] { return topk_arguments(rows, width, k, dtype, device); },
                       {}});
    }
  }
  return cases;
}

ShapeGrid topk_grid(c10::Device) {
  ShapeGrid grid;
  grid.axes = {
      {"rows", {1, 8, 64, 512, 4096}}, {"width", {4096, 32000, 50257, 128256, 262144}}, {"k", {1, 50, 256, 1024}}};
  grid.make_arguments = [](const std::vector<int64_t>& point, c10::ScalarType dtype, c10::Device device) {
    return topk_arguments(point[0], point[1], point[2], dtype, device);
  };
  grid.impl_correct_for = [](const std::vector<int64_t>& point, c10::ScalarType) {
    return point[2] <= std::min<int64_t>(point[1], NATIVE_OPS_TOPK_MAX_K) ? std::vector<std::string>{"topk_cuda_0"}
                                                                          : std::vector<std::string>{};
  };
  return grid;
}

}  // namespace

void register_topk_op_db() {
  OpEntry entry;
  entry.op_symbol = "topk";
  entry.dsls = {"cuda"};
  entry.devices = {c10::DeviceType::CUDA};
  entry.dtypes = {at::kBFloat16, at::kHalf, at::kFloat};
  entry.differentiable = false;  // the gradient lands where the indices point: equal elements may differ
  entry.canonical_outputs = topk_canonical;
  entry.samples = topk_samples;
  entry.error_samples = topk_errors;
  entry.cost = topk_cost;
  entry.bench_cases = topk_bench_cases;
  entry.grid = topk_grid;
  register_op_entry(std::move(entry));
}

}  // namespace native_ops::kernels
