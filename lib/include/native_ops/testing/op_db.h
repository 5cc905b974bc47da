#pragma once
// The op database: for every overridden op, the inputs that judge an override (sample
// inputs, error inputs, tolerances) and the shapes that measure it (benchmark cases and a
// bytes/FLOPs model). `native-ops test` and `native-ops bench` read it; it is OpInfo's
// idea, for overrides. One entry per op and DSL tag set; built-in entries live next to
// their kernels in kernels/<op>/op_db.cpp, and plugins add theirs with register_op_entry().

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include "native_ops/export.h"

#include <ATen/core/stack.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

namespace native_ops {

/// |actual - expected| <= atol + rtol * |expected|, elementwise.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

/// torch.testing.assert_close's default tolerance for `dtype`: float16 1e-3/1e-5,
/// bfloat16 1.6e-2/1e-5, float32 1.3e-6/1e-5, float64 1e-7/1e-7, exact for the rest.
NATIVE_OPS_API Tolerance default_tolerance(c10::ScalarType dtype);

/// What a sample exercises. A sweep reports results per class, and every built-in entry
/// must cover each class (or say why it cannot).
enum class SampleClass {
  typical,         // an ordinary call
  empty,           // a tensor with no element
  zero_dim,        // a 0-dim (scalar) tensor
  one_element,     // a single element
  odd_sizes,       // sizes that are not multiples of any vector width
  large,           // at least 1M elements
  transposed,      // a transposed (permuted) view
  step_sliced,     // a view sliced with a step > 1
  expanded,        // an expanded or broadcast view (stride 0)
  extreme_values,  // large magnitudes, +-inf, NaN where it means something
};
NATIVE_OPS_API std::string_view to_string(SampleClass sample_class);
/// Every class, in declaration order.
NATIVE_OPS_API const std::vector<SampleClass>& all_sample_classes();

/// One call of the op, to judge overrides on.
struct Sample {
  std::string description;  // "f32[3,17,1] x f32[3,1,13]"
  SampleClass sample_class = SampleClass::typical;
  /// The schema's arguments in order; trailing defaulted ones may be left out.
  torch::jit::Stack arguments;
  /// Ids of the nodes whose cond must accept this call; every other node of the op must
  /// decline it. A node no sample is meant for fails as "not exercised".
  std::vector<std::string> meant_for;
};

/// A call the op must refuse, and text its error must contain.
struct ErrorSample {
  std::string description;
  torch::jit::Stack arguments;
  std::string error_contains;
};

/// What one call moves and computes, for GB/s and the share of the copy bandwidth.
struct Cost {
  double bytes = 0;  // read + written, each element once
  double flops = 0;
};

/// One benchmark shape.
struct BenchCase {
  std::string shape;  // "(64,1024,1)x(64,1,1024)"
  /// Makes fresh arguments on the device (called once per case, not per repetition).
  std::function<torch::jit::Stack()> make_arguments;
  /// Nodes whose impl is correct on this shape although their cond declines it (declined
  /// for speed): the benchmark times them too and flags "declines where faster".
  std::vector<std::string> impl_correct_for;
};

/// One size feature that decides an op's speed ("rows", "width"), and the values the grid
/// takes on it.
struct GridAxis {
  std::string name;
  std::vector<int64_t> values;
};

/// The shape grid of an op: every combination of its axes' values, in every dtype of the
/// entry. `native-ops bench --grid` times every node and aten on each cell.
struct ShapeGrid {
  std::vector<GridAxis> axes;
  /// The arguments of one cell: one value per axis, in `axes`' order. On the meta device
  /// it must allocate nothing: cells are sized that way before any is made.
  std::function<torch::jit::Stack(const std::vector<int64_t>& point, c10::ScalarType dtype, c10::Device device)>
      make_arguments;
  /// Cells whose cost model moves more bytes are left out.
  double max_bytes = 4.0 * (int64_t{1} << 30);
  /// The nodes whose impl is correct on a cell although their cond may decline it for
  /// speed, as BenchCase::impl_correct_for: the grid times them there too, and flags
  /// "declines where faster" where a kernel has outgrown its cond. Unset: none.
  std::function<std::vector<std::string>(const std::vector<int64_t>& point, c10::ScalarType dtype)> impl_correct_for;
};

/// The grid of row ops (softmax, norms: a reduction over the last dimension), axes "rows"
/// and "width": on a GPU, decode rows (1 to 64) and training rows up to 32768, times row
/// widths of real models (768 to 256000, the vocabularies 32000, 50257, 128256, 151936) and
/// odd ones (127, 4097), up to 4 GiB a cell; on the CPU a smaller grid, up to 256 MiB.
/// `make` makes a call's arguments from a cell; it must allocate nothing on the meta device.
NATIVE_OPS_API ShapeGrid row_op_grid(
    c10::Device device,
    std::function<torch::jit::Stack(int64_t rows, int64_t width, c10::ScalarType dtype, c10::Device device)> make);

/// The database entry of one op.
struct NATIVE_OPS_API OpEntry {
  std::string op_symbol;                            // "bmm", "add_.Tensor" (namespace aten)
  std::vector<std::string> dsls;                    // the DSLs whose overrides it judges: {"cpp"}, {"cuda", "triton"}
  std::vector<c10::DeviceType> devices;             // where it has samples
  std::vector<c10::ScalarType> dtypes;              // every dtype the op supports there
  std::map<c10::ScalarType, Tolerance> tolerances;  // exceptions to default_tolerance()
  /// The op has a derivative: the sweep compares routed and reference gradients.
  bool differentiable = false;
  /// Also compare against the original kernel run in float64 on upcast inputs.
  bool upcast_reference = true;
  /// For ops whose results aten leaves partly open (which of equal elements topk returns,
  /// the order of unsorted results): maps a call's arguments and outputs to outputs that
  /// differ only where results truly differ (topk: its values sorted, and the elements its
  /// indices gather, sorted). Applied to the routed, the reference and the float64 outputs
  /// before they are compared (gradients are compared as they are); unset, outputs are
  /// compared as they are.
  std::function<torch::jit::Stack(const torch::jit::Stack& arguments, const torch::jit::Stack& outputs)>
      canonical_outputs;
  /// Sample classes the op cannot have, with why ("bmm takes 3-D tensors only").
  std::map<SampleClass, std::string> inapplicable_classes;

  std::function<std::vector<Sample>(c10::Device device, c10::ScalarType dtype)> samples;
  std::function<std::vector<ErrorSample>(c10::Device device)> error_samples;  // optional
  std::function<Cost(const torch::jit::Stack& arguments)> cost;
  std::function<std::vector<BenchCase>(c10::Device device)> bench_cases;
  std::function<ShapeGrid(c10::Device device)> grid;  // optional

  Tolerance tolerance(c10::ScalarType dtype) const;
  bool tagged(std::string_view dsl) const;
};

/// Adds an entry. Throws native_ops::Error, leaving the database unchanged, for an unknown
/// op (with close names), an entry without a dsl tag, dtype, device, sample generator,
/// cost model or bench cases, or a second entry for the same op and dsl.
NATIVE_OPS_API void register_op_entry(OpEntry entry);

/// Every entry, built-ins first, then in registration order.
NATIVE_OPS_API std::vector<OpEntry> op_entries();

/// The entries that judge overrides of `op_symbol` written in `dsl`.
NATIVE_OPS_API std::vector<OpEntry> op_entries_for(std::string_view op_symbol, std::string_view dsl);

}  // namespace native_ops
