// The benchmark engine: what it times and reports, and that its flags catch a cond that
// is too wide or too narrow. The overrides here differ from aten by large factors (30x
// the work, or none at all), so the flags do not depend on a quiet machine.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/mul_ops.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/rand.h>
#include <gtest/gtest.h>

#include "native_ops/native_ops.h"
#include "native_ops/testing/benchmark.h"
#include "native_ops/testing/op_db.h"
#include "support.h"

namespace native_ops {
namespace {

// Registers an op database entry for mul.Tensor (tagged alpha) with one bench case.
void register_mul_entry(c10::DeviceType device_type, int64_t numel, std::vector<std::string> impl_correct_for) {
  OpEntry entry;
  entry.op_symbol = "mul.Tensor";
  entry.dsls = {"alpha"};
  entry.devices = {device_type};
  entry.dtypes = {at::kFloat};
  entry.samples = [](c10::Device, c10::ScalarType) { return std::vector<Sample>{}; };
  entry.cost = [](const torch::jit::Stack& args) { return Cost{3.0 * args[0].toTensor().nbytes(), 0}; };
  entry.bench_cases = [numel, impl_correct_for](c10::Device device) {
    return std::vector<BenchCase>{{"[" + std::to_string(numel) + "]",
                                   [numel, device] {
                                     return torch::jit::Stack{at::rand({numel}, at::TensorOptions().device(device)),
                                                              at::rand({numel}, at::TensorOptions().device(device))};
                                   },
                                   impl_correct_for}};
  };
  register_op_entry(std::move(entry));
}

// An op database entry for mul.Tensor (tagged alpha) with a shape grid and no bench shapes.
OpEntry mul_grid_entry(std::vector<c10::ScalarType> dtypes, std::function<ShapeGrid(c10::Device)> grid) {
  OpEntry entry;
  entry.op_symbol = "mul.Tensor";
  entry.dsls = {"alpha"};
  entry.devices = {c10::DeviceType::CPU};
  entry.dtypes = std::move(dtypes);
  entry.samples = [](c10::Device, c10::ScalarType) { return std::vector<Sample>{}; };
  entry.cost = [](const torch::jit::Stack& args) { return Cost{3.0 * args[0].toTensor().nbytes(), 0}; };
  entry.bench_cases = [](c10::Device) { return std::vector<BenchCase>{}; };
  entry.grid = std::move(grid);
  return entry;
}

// mul's arguments for a grid cell: two tensors of ones of `sizes`.
torch::jit::Stack ones_pair(at::IntArrayRef sizes, c10::ScalarType dtype, c10::Device device) {
  const at::TensorOptions options = at::TensorOptions().dtype(dtype).device(device);
  return torch::jit::Stack{at::ones(sizes, options), at::ones(sizes, options)};
}

// The options of a grid run of the alpha overrides, after init().
BenchOptions alpha_grid(double seconds_per_case) {
  init();
  BenchOptions options;
  options.dsl = "alpha";
  options.grid = true;
  options.seconds_per_case = seconds_per_case;
  return options;
}

BenchReport bench_alpha(c10::DeviceType device_type) {
  init();
  BenchOptions options;
  options.dsl = "alpha";
  options.devices = {device_type};
  options.seconds_per_case = 0.05;
  return run_benchmarks(options);
}

bool has_flag(const BenchRow& row, const std::string& flag) {
  return std::find(row.flags.begin(), row.flags.end(), flag) != row.flags.end();
}

TEST(Bench, TimesAtenTheImplAndTheRoutedCall) {
  testing::register_test_dsls();
  register_op_override<at::_ops::mul_Tensor>(
      "alpha", c10::DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) -> Verdict { return true; },
      [](const at::Tensor& a, const at::Tensor& b) { return call_original<at::_ops::mul_Tensor>(a, b); });
  register_mul_entry(c10::DeviceType::CPU, 4096, {});
  const BenchReport report = bench_alpha(c10::DeviceType::CPU);
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].device, "cpu");
  EXPECT_GT(report.devices[0].copy_gbps, 0.1);
  ASSERT_EQ(report.rows.size(), 1u);
  const BenchRow& row = report.rows[0];
  EXPECT_TRUE(row.accepted);
  ASSERT_TRUE(row.timed);
  for (const Timing* t : {&row.original, &row.impl, &row.routed}) {
    EXPECT_GT(t->median_ns, 0);
    EXPECT_LE(t->q1_ns, t->median_ns);
    EXPECT_GE(t->q3_ns, t->median_ns);
    EXPECT_GE(t->rounds, 15u);
    EXPECT_GT(t->calls_per_round, 1u);  // a 200 us batch of few-microsecond calls
  }
  EXPECT_LE(row.speedup_low, row.speedup);
  EXPECT_GE(row.speedup_high, row.speedup);
  EXPECT_DOUBLE_EQ(row.bytes, 3.0 * 4096 * 4);
  EXPECT_NEAR(row.override_gbps, row.bytes / row.routed.median_ns, 1e-9);
  EXPECT_NEAR(row.copy_fraction, row.override_gbps / report.devices[0].copy_gbps, 1e-12);
  // On the CPU a call's host time is all of it.
  EXPECT_DOUBLE_EQ(row.host_original_ns, row.original.median_ns);
  EXPECT_DOUBLE_EQ(row.host_routed_ns, row.routed.median_ns);
}

// The grid: every cell of the axes' product in the dtypes asked for, named by its features;
// a cell over max_bytes is sized on the meta device and never made; a cell the cond
// declines is listed, not timed.
TEST(Bench, TheGridTimesEveryCellInTheDtypesAskedFor) {
  testing::register_test_dsls();
  register_op_override<at::_ops::mul_Tensor>(
      "alpha", c10::DispatchKey::CPU,
      [](const at::Tensor& a, const at::Tensor&) -> Verdict { return a.numel() >= 100; },
      [](const at::Tensor& a, const at::Tensor& b) { return call_original<at::_ops::mul_Tensor>(a, b); });
  static int64_t largest_made = 0;
  register_op_entry(mul_grid_entry({at::kFloat, at::kDouble}, [](c10::Device) {
    ShapeGrid grid;
    grid.axes = {{"n", {16, 1000, int64_t{1} << 22}}};
    grid.max_bytes = 1 << 20;
    grid.make_arguments = [](const std::vector<int64_t>& point, c10::ScalarType dtype, c10::Device device) {
      if (!device.is_meta()) largest_made = std::max(largest_made, point[0]);
      return ones_pair({point[0]}, dtype, device);
    };
    return grid;
  }));
  BenchOptions options = alpha_grid(0.02);
  options.dtypes = {at::kDouble};
  const BenchReport report = run_benchmarks(options);
  ASSERT_EQ(report.rows.size(), 2u);
  EXPECT_EQ(report.rows[0].shape, "f64 n=16");
  EXPECT_EQ(report.rows[0].dtype, "f64");
  EXPECT_EQ(report.rows[0].features, (std::vector<std::pair<std::string, int64_t>>{{"n", 16}}));
  EXPECT_FALSE(report.rows[0].accepted);
  EXPECT_FALSE(report.rows[0].timed);
  EXPECT_EQ(report.rows[1].shape, "f64 n=1000");
  EXPECT_TRUE(report.rows[1].timed);
  EXPECT_DOUBLE_EQ(report.rows[1].bytes, 3.0 * 1000 * 8);
  EXPECT_EQ(largest_made, 1000) << "the cell over max_bytes was made";
}

// ShapeGrid::impl_correct_for: a cell the cond declines for speed is timed with the impl
// alone where the grid says the impl is correct there, and flagged where it is faster.
TEST(Bench, TheGridTimesACellDeclinedForSpeedWhereTheImplIsCorrect) {
  testing::register_test_dsls();
  static at::Tensor cached;  // the impl returns a finished product: no work at all
  const std::string node = register_op_override<at::_ops::mul_Tensor>(
      "alpha", c10::DispatchKey::CPU,
      [](const at::Tensor& a, const at::Tensor&) -> Verdict {
        return a.numel() >= (1 << 18) ? Verdict(true) : decline("declined for the test");
      },
      [](const at::Tensor& a, const at::Tensor&) {
        if (!cached.defined() || !cached.sizes().equals(a.sizes())) cached = at::empty_like(a);
        return cached;
      });
  register_op_entry(mul_grid_entry({at::kFloat}, [node](c10::Device) {
    ShapeGrid grid;
    grid.axes = {{"n", {1000, 1 << 16, 1 << 18}}};
    grid.make_arguments = [](const std::vector<int64_t>& point, c10::ScalarType dtype, c10::Device device) {
      return ones_pair({point[0]}, dtype, device);
    };
    // Correct from 2^16 elements: the cell of 1000 stays untimed.
    grid.impl_correct_for = [node](const std::vector<int64_t>& point, c10::ScalarType) {
      return point[0] >= (1 << 16) ? std::vector<std::string>{node} : std::vector<std::string>{};
    };
    return grid;
  }));
  BenchOptions options = alpha_grid(0.05);
  const BenchReport report = run_benchmarks(options);
  ASSERT_EQ(report.rows.size(), 3u);
  EXPECT_FALSE(report.rows[0].accepted);
  EXPECT_FALSE(report.rows[0].timed);
  EXPECT_FALSE(report.rows[1].accepted);
  ASSERT_TRUE(report.rows[1].timed);
  EXPECT_EQ(report.rows[1].routed.rounds, 0u);
  EXPECT_TRUE(has_flag(report.rows[1], "declines where faster"));
  EXPECT_TRUE(report.rows[2].accepted);
  EXPECT_TRUE(report.rows[2].timed);
}

// BenchOptions::cells: only the cells whose features take the values asked for; an axis or
// a value that no grid has is an error before anything is timed.
TEST(Bench, CellsPickGridCellsByTheirFeatures) {
  testing::register_test_dsls();
  register_op_override<at::_ops::mul_Tensor>(
      "alpha", c10::DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) -> Verdict { return true; },
      [](const at::Tensor& a, const at::Tensor& b) { return call_original<at::_ops::mul_Tensor>(a, b); });
  register_op_entry(mul_grid_entry({at::kFloat}, [](c10::Device) {
    ShapeGrid grid;
    grid.axes = {{"rows", {1, 8, 64}}, {"width", {16, 127, 256}}};
    grid.make_arguments = [](const std::vector<int64_t>& point, c10::ScalarType dtype, c10::Device device) {
      return ones_pair({point[0], point[1]}, dtype, device);
    };
    return grid;
  }));
  BenchOptions options = alpha_grid(0.01);
  options.cells = {{"width", {256, 127}}, {"rows", {8}}};
  const BenchReport report = run_benchmarks(options);
  std::vector<std::string> shapes;
  for (const BenchRow& row : report.rows) shapes.push_back(row.shape);
  EXPECT_EQ(shapes, (std::vector<std::string>{"f32 rows=8 width=127", "f32 rows=8 width=256"}));

  const auto error = [&](std::map<std::string, std::vector<int64_t>> cells) {
    options.cells = std::move(cells);
    return testing::error_of([&] { run_benchmarks(options); });
  };
  EXPECT_NE(error({{"widht", {256}}})
                .find("no grid of the overrides selected has an axis 'widht' (their axes: rows, "
                      "width): name one of those"),
            std::string::npos);
  EXPECT_NE(error({{"width", {255}}}).find("has width 255 (its values: 16, 127, 256)"), std::string::npos);
  options.grid = false;
  EXPECT_NE(error({{"rows", {8}}}).find("cells are chosen from grids"), std::string::npos);
}

TEST(Bench, FlagsAnOverrideThatFiresWhereSlower) {
  testing::register_test_dsls();
  register_op_override<at::_ops::mul_Tensor>(
      "alpha", c10::DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) -> Verdict { return true; },
      [](const at::Tensor& a, const at::Tensor& b) {
        at::Tensor out;
        for (int i = 0; i < 30; ++i) out = call_original<at::_ops::mul_Tensor>(a, b);
        return out;
      });
  register_mul_entry(c10::DeviceType::CPU, 65536, {});
  const BenchReport report = bench_alpha(c10::DeviceType::CPU);
  ASSERT_EQ(report.rows.size(), 1u);
  EXPECT_LT(report.rows[0].speedup_high, 1);
  EXPECT_TRUE(has_flag(report.rows[0], "fires where slower"));
}

TEST(Bench, FlagsACondThatDeclinesWhereFaster) {
  testing::register_test_dsls();
  static at::Tensor cached;  // the impl returns a finished product: no work at all
  const std::string node = register_op_override<at::_ops::mul_Tensor>(
      "alpha", c10::DispatchKey::CPU,
      [](const at::Tensor&, const at::Tensor&) -> Verdict { return decline("declined for the test"); },
      [](const at::Tensor& a, const at::Tensor&) {
        if (!cached.defined()) cached = at::empty_like(a);
        return cached;
      });
  register_mul_entry(c10::DeviceType::CPU, 1 << 20, {node});
  const BenchReport report = bench_alpha(c10::DeviceType::CPU);
  ASSERT_EQ(report.rows.size(), 1u);
  const BenchRow& row = report.rows[0];
  EXPECT_FALSE(row.accepted);
  EXPECT_EQ(row.decline_reason, "declined for the test");
  ASSERT_TRUE(row.timed);
  EXPECT_EQ(row.routed.rounds, 0u);  // a declined shape has no routed call of its own
  EXPECT_GT(row.speedup_low, 1);
  EXPECT_TRUE(has_flag(row, "declines where faster"));
}

// --as-routed times every node that accepts the call beside the routed one: the first
// registered fires here (no table), 30x slower than the second, which must be named.
TEST(Bench, AsRoutedNamesTheFastestOfTheAcceptingNodes) {
  testing::register_test_dsls();
  const std::string slow = register_op_override<at::_ops::mul_Tensor>(
      "alpha", c10::DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) -> Verdict { return true; },
      [](const at::Tensor& a, const at::Tensor& b) {
        at::Tensor out;
        for (int i = 0; i < 30; ++i) out = call_original<at::_ops::mul_Tensor>(a, b);
        return out;
      });
  static at::Tensor cached;
  const std::string fast = register_op_override<at::_ops::mul_Tensor>(
      "beta", c10::DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) -> Verdict { return true; },
      [](const at::Tensor& a, const at::Tensor&) {
        if (!cached.defined()) cached = at::empty_like(a);
        return cached;
      });
  register_mul_entry(c10::DeviceType::CPU, 65536, {});
  init();
  BenchOptions options;
  options.dsl = "alpha";
  options.devices = {c10::DeviceType::CPU};
  options.seconds_per_case = 0.05;
  options.as_routed = true;
  const BenchReport report = run_benchmarks(options);
  ASSERT_EQ(report.rows.size(), 1u);  // one row per op and shape, not per node
  const BenchRow& row = report.rows[0];
  EXPECT_EQ(row.node_id, slow);
  EXPECT_EQ(row.fastest, fast);
  EXPECT_GT(row.routed_over_fastest_low, 1 + kFastestMargin);
  EXPECT_FALSE(row.near_fastest());
  EXPECT_TRUE(has_flag(row, "slower than the fastest"));
  EXPECT_TRUE(has_flag(row, "routed slower than aten"));
}

TEST(Bench, LeavesUntimedADeclinedShapeTheImplMayGetWrong) {
  testing::register_test_dsls();
  register_op_override<at::_ops::mul_Tensor>(
      "alpha", c10::DispatchKey::CPU,
      [](const at::Tensor&, const at::Tensor&) -> Verdict { return decline("not this shape"); },
      [](const at::Tensor& a, const at::Tensor&) -> at::Tensor { throw std::runtime_error("must not run"); });
  register_mul_entry(c10::DeviceType::CPU, 64, {});
  const BenchReport report = bench_alpha(c10::DeviceType::CPU);
  ASSERT_EQ(report.rows.size(), 1u);
  EXPECT_FALSE(report.rows[0].timed);
  EXPECT_EQ(report.rows[0].decline_reason, "not this shape");
}

TEST(Bench, TimesCudaKernelsWithEvents) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device here: the CUDA clock runs on the GPU machine";
  testing::register_test_dsls();
  register_op_override<at::_ops::mul_Tensor>(
      "alpha", c10::DispatchKey::CUDA, [](const at::Tensor&, const at::Tensor&) -> Verdict { return true; },
      [](const at::Tensor& a, const at::Tensor& b) { return call_original<at::_ops::mul_Tensor>(a, b); });
  register_mul_entry(c10::DeviceType::CUDA, 1 << 24, {});
  const BenchReport report = bench_alpha(c10::DeviceType::CUDA);
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].device, "cuda:0");
  EXPECT_GT(report.devices[0].copy_gbps, 100);  // any datacenter GPU copies far faster than this
  ASSERT_EQ(report.rows.size(), 1u);
  const BenchRow& row = report.rows[0];
  ASSERT_TRUE(row.timed);
  EXPECT_EQ(row.routed.calls_per_round, 1u);  // one call per L2 flush
  EXPECT_GT(row.routed.median_ns, 1000);      // 192 MiB cannot move in a microsecond
  // Launches return before the kernel ends: host time per call is far below device time.
  EXPECT_GT(row.host_routed_ns, 0);
  EXPECT_GT(row.host_original_ns, 0);
  EXPECT_LT(row.host_routed_ns, row.routed.median_ns);
  // The override is aten's own kernel: the interval must not exclude parity by much.
  EXPECT_GT(row.speedup_high, 0.8);
  EXPECT_LT(row.speedup_low, 1.25);
}

}  // namespace
}  // namespace native_ops
