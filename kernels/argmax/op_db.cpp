// The op database entries of argmax, argmin, max.dim and min.dim (cuda at CUDA): what judges
// and measures their overrides.
#include <limits>
#include <optional>

#include <ATen/core/Tensor.h>
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

// The cuda kernels' domain: their conds must accept exactly these calls. Contiguous rows,
// but where aten is as fast (speed.h).
bool cuda_handles(const at::Tensor& self, std::optional<int64_t> dim) {
  const auto dtype = self.scalar_type();
  if ((dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16) || self.dim() == 0 ||
      (dim.has_value() && *dim != -1 && *dim != self.dim() - 1) || self.numel() == 0 || !self.is_contiguous()) {
    return false;
  }
  const int64_t width = dim.has_value() ? self.size(-1) : self.numel();
  return cuda_arg_extreme_slower_than_aten(self.numel() / width, width, self.element_size()) == nullptr;
}

// One of the four ops: whether it takes an optional dim (argmax, argmin) and its node.
struct Op {
  const char* symbol;
  const char* node;
  bool optional_dim;
};

std::vector<Sample> arg_extreme_samples(c10::Device device, c10::ScalarType dtype, const Op& op) {
  std::vector<Sample> all;
  uint64_t seed = 300;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto add_tensor = [&](SampleClass sample_class, const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                        const std::string& note) {
    std::vector<std::string> meant_for;
    if (cuda_handles(self, dim)) meant_for.push_back(op.node);
    const c10::IValue dim_value = dim.has_value() ? c10::IValue(*dim) : c10::IValue();
    all.push_back({samples::describe(self) + (dim.has_value() ? ", dim " + std::to_string(*dim) : ", no dim") +
                       (keepdim ? ", keepdim" : "") + note,
                   sample_class,
                   {self, dim_value, keepdim},
                   meant_for});
  };
  auto make = [&](std::vector<int64_t> sizes, Fill fill = {}) {
    fill.seed = ++seed;
    return samples::make_tensor(sizes, dtype, device, fill);
  };
  auto add = [&](SampleClass sample_class, std::vector<int64_t> sizes, int64_t dim, Fill fill = {}) {
    add_tensor(sample_class, make(sizes, fill), dim, false, "");
  };

  add(SampleClass::typical, {64, 1024}, -1);
  add_tensor(SampleClass::typical, make({64, 1024}), 1, true, "");
  add(SampleClass::typical, {64, 1024}, 0);  // not the last dimension
  add(SampleClass::typical, {8, 128}, -1);
  add(SampleClass::typical, {4, 6, 2048}, -1);
  add(SampleClass::typical, {1, 4096}, -1);    // decode rows
  add(SampleClass::typical, {8, 128256}, -1);  // decode rows over a vocabulary: split over blocks
  add(SampleClass::typical, {1, 151936}, -1);
  if (op.optional_dim) {  // without a dim: the whole tensor, one row split over blocks
    add_tensor(SampleClass::typical, make({64, 1024}), std::nullopt, false, "");
    add_tensor(SampleClass::typical, make({3, 5, 7}), std::nullopt, true, "");
  }
  add(SampleClass::empty, {0, 16}, -1);
  add(SampleClass::zero_dim, {}, 0);
  add(SampleClass::one_element, {1, 1}, -1);
  add(SampleClass::one_element, {65536, 1}, -1);  // rows of one element
  add(SampleClass::odd_sizes, {5, 13109}, -1);
  add(SampleClass::odd_sizes, {4099, 17}, -1);  // a warp a row, rows off vector boundaries
  add(SampleClass::odd_sizes, {3, 50257}, -1);  // split rows, off vector boundaries
  add(SampleClass::odd_sizes, {2, 151937}, -1);
  {
    // A contiguous view one element into its storage: every row starts off a boundary.
    const at::Tensor storage = make({3 * 1031 + 1});
    add_tensor(SampleClass::odd_sizes, storage.narrow(0, 1, 3 * 1031).view({3, 1031}), -1, false,
               ", one element into its storage");
  }
  add(SampleClass::large, {1024, 1024}, -1);
  add(SampleClass::large, {4096, 2048}, -1);  // a warp a row
  add(SampleClass::large, {300, 16400}, -1);  // a block a row
  add(SampleClass::large, {2, 1 << 19}, -1);  // declined: rows wider than 262144
  add(SampleClass::transposed, {256, 512}, -1, laid_out(Layout::transposed));
  add(SampleClass::step_sliced, {128, 1024}, -1, laid_out(Layout::step_sliced));
  add(SampleClass::expanded, {128, 1024}, -1, laid_out(Layout::expanded));
  add(SampleClass::extreme_values, {64, 1031}, -1, samples::with_extremes(dtype));
  {
    // Ties everywhere: values from {-2, ..., 2}, and rows of +-0 alone (equal): the first
    // index of the best must win, whichever thread saw it.
    Fill few;
    few.low = -2;
    few.high = 2;
    add_tensor(SampleClass::extreme_values, make({64, 1031}, few).round_(), -1, false, ", ties");
    add_tensor(SampleClass::extreme_values, make({4, 65536}, few).round_(), -1, false, ", ties in wide rows");
    add_tensor(SampleClass::extreme_values, make({64, 1024}).mul_(0), -1, false, ", +-0 only");
  }
  {
    // NaN wins, the first NaN of a row: NaNs at two columns of every row, a row of NaN,
    // and a row of -inf (+inf for the smallest) with no NaN.
    at::Tensor self = make({16, 4100});
    self.select(1, 4000).fill_(nan);
    self.select(1, 77).fill_(nan);
    self.select(0, 3).fill_(nan);
    self.select(0, 5).fill_(-inf);
    self.select(0, 6).fill_(inf);
    add_tensor(SampleClass::extreme_values, self, -1, false, ", NaN and inf rows");
  }
  if (device.is_cuda()) {                       // the bounds of the conds, too large for the CPU's sample checks
    add(SampleClass::large, {64, 131073}, -1);  // a 1024-thread block a row, off vector boundaries
    add(SampleClass::large, {63, 131073}, -1);  // declined
    add(SampleClass::large, {8192, 4096}, -1);  // a warp a row
    add(SampleClass::large, {8192, 4100}, -1);  // declined in float32
    at::Tensor late = make({64, 200000});       // NaN deep in a row a block reads
    late.select(1, 150001).fill_(nan);
    late.select(1, 190000).fill_(nan);
    add_tensor(SampleClass::extreme_values, late, -1, false, ", NaN late in wide rows");
    // A cluster a row: NaN in the row's last blocks, a row of -inf and one of +inf (equal
    // across the blocks: the first column wins).
    at::Tensor decode = make({4, 100003});
    decode.select(1, 70001).fill_(nan);
    decode.select(1, 99001).fill_(nan);
    decode.select(0, 1).fill_(-inf);
    decode.select(0, 2).fill_(inf);
    add_tensor(SampleClass::extreme_values, decode, -1, false, ", NaN late in decode rows");
  }
  return all;
}

std::vector<ErrorSample> arg_extreme_errors(c10::Device device, const Op& op) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  const std::string name = std::string(op.symbol).substr(0, std::string(op.symbol).find('.'));
  return {
      {"dim out of range: f32[4,5], dim 2", {at::ones({4, 5}, f32), int64_t{2}, false}, "Dimension out of range"},
      {"a reduction over no element: f32[4,0], dim 1",
       {at::empty({4, 0}, f32), int64_t{1}, false},
       name + "(): Expected reduction dim 1 to have non-zero size"},
  };
}

// Reads every element once; writes an index (and the element) a row.
Cost arg_extreme_cost(const torch::jit::Stack& arguments, bool with_values) {
  const at::Tensor& self = arguments[0].toTensor();
  const int64_t width = arguments[1].isNone() ? self.numel() : self.dim() == 0 ? 1 : self.size(-1);
  const double rows = width == 0 ? 0 : static_cast<double>(self.numel() / width);
  return {static_cast<double>(self.nbytes()) + rows * (8 + (with_values ? self.element_size() : 0)),
          static_cast<double>(self.numel())};
}

BenchCase rows_bench_case(int64_t rows, int64_t width, c10::ScalarType dtype, c10::Device device) {
  return {dtype_name(dtype) + " [" + std::to_string(rows) + "," + std::to_string(width) + "]",
          [rows, width, dtype, device] {
            return torch::jit::Stack{samples::make_tensor({rows, width}, dtype, device), int64_t{-1}, false};
          },
          {}};
}

// Logits over vocabularies as greedy decoding and training metrics reduce them.
std::vector<BenchCase> arg_extreme_bench_cases(c10::Device device) {
  std::vector<BenchCase> cases;
  for (const c10::ScalarType dtype : {at::kBFloat16, at::kFloat}) {
    for (const auto& [rows, width] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 128256}, {64, 128256}, {4096, 128256}, {4096, 50257}, {32768, 4096}}) {
      cases.push_back(rows_bench_case(rows, width, dtype, device));
    }
  }
  return cases;
}

// The grid of rows x widths; the op's kernel is correct on every cell its cond declines.
ShapeGrid arg_extreme_grid(c10::Device device, const Op& op) {
  ShapeGrid grid = row_op_grid(device, [](int64_t rows, int64_t width, c10::ScalarType dtype, c10::Device device) {
    const at::Tensor input = at::empty({rows, width}, at::TensorOptions().dtype(dtype).device(device)).uniform_(-4, 4);
    return torch::jit::Stack{input, int64_t{-1}, false};
  });
  grid.impl_correct_for = [node = std::string(op.node)](const std::vector<int64_t>&, c10::ScalarType) {
    return std::vector<std::string>{node};
  };
  return grid;
}

}  // namespace

void register_argmax_op_db() {
  for (const Op op : {Op{"argmax", "argmax_cuda_0", true}, Op{"argmin", "argmin_cuda_0", true},
                      Op{"max.dim", "max_dim_cuda_0", false}, Op{"min.dim", "min_dim_cuda_0", false}}) {
    OpEntry entry;
    entry.op_symbol = op.symbol;
    entry.dsls = {"cuda"};
    entry.devices = {c10::DeviceType::CUDA};
    entry.dtypes = {at::kBFloat16, at::kHalf, at::kFloat};
    entry.differentiable = !op.optional_dim;  // max.dim's and min.dim's values
    entry.samples = [op](c10::Device device, c10::ScalarType dtype) { return arg_extreme_samples(device, dtype, op); };
    entry.error_samples = [op](c10::Device device) { return arg_extreme_errors(device, op); };
    entry.cost = [with_values = !op.optional_dim](const torch::jit::Stack& arguments) {
      return arg_extreme_cost(arguments, with_values);
    };
    entry.bench_cases = arg_extreme_bench_cases;
    entry.grid = [op](c10::Device device) { return arg_extreme_grid(device, op); };
    register_op_entry(std::move(entry));
  }
}

}  // namespace native_ops::kernels
