// Reports of `native-ops bench` read back, and the goals a grid run is held to
// (check_grid_goals): which cells the floor holds and which miss it, the odd widths'
// allowance, decode calls with their host time.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "native_ops/error.h"
#include "native_ops/testing/benchmark.h"
#include "native_ops/testing/report.h"

namespace native_ops {
namespace {

constexpr double kMiB = 1 << 20;
constexpr double kCopyGbps = 4000;

// A timed row of a per-node grid run whose override moves `bytes` in `ns`.
BenchRow grid_row(const std::string& node, const std::string& dtype, int64_t rows, int64_t width, double bytes,
                  double ns) {
  BenchRow row;
  row.node_id = node;
  row.dsl = node.find("triton") == std::string::npos ? "cuda" : "triton";
  row.op_symbol = "_softmax";
  row.device = "cuda:0";
  row.dtype = dtype;
  row.features = {{"rows", rows}, {"width", width}};
  row.shape = dtype + " rows=" + std::to_string(rows) + " width=" + std::to_string(width);
  row.accepted = true;
  row.timed = true;
  row.bytes = bytes;
  row.flops = bytes / 2;
  row.original = {2 * ns, 2 * ns, 2 * ns, 20, 1};
  row.impl = row.routed = {ns, ns, ns, 20, 1};
  row.original_gbps = bytes / row.original.median_ns;
  row.override_gbps = bytes / ns;
  row.copy_fraction = row.override_gbps / kCopyGbps;
  row.speedup = 2;
  return row;
}

// The time that puts `bytes` at `fraction` of the copy floor.
double ns_at(double bytes, double fraction) { return bytes / (kCopyGbps * fraction); }

BenchReport grid_report(std::vector<BenchRow> rows) {
  BenchReport report;
  report.devices = {{"cuda:0", "NVIDIA H200", kCopyGbps, 0}};
  report.rows = std::move(rows);
  return report;
}

bool has_flag(const BenchRow& row, const std::string& flag) {
  return std::count(row.flags.begin(), row.flags.end(), flag) == 1;
}

TEST(GridGoals, HoldsCellsOfSixteenMiBToTheFastestOverride) {
  const double big = 64 * kMiB, small = 8 * kMiB;
  BenchReport report = grid_report({
      grid_row("_softmax_cuda_0", "f32", 2048, 8192, big, ns_at(big, 0.80)),    // 0: under 85%
      grid_row("_softmax_triton_0", "f32", 2048, 8192, big, ns_at(big, 0.50)),  // 1: same cell
      grid_row("_softmax_cuda_0", "f32", 4096, 8192, big, ns_at(big, 0.60)),    // 2: the faster node reaches it
      grid_row("_softmax_triton_0", "f32", 4096, 8192, big, ns_at(big, 0.86)),  // 3
      grid_row("_softmax_cuda_0", "f32", 64, 8192, small, ns_at(small, 0.10)),  // 4: too small to hold
  });
  const GridGoalCheck check = check_grid_goals(report);
  EXPECT_EQ(check.floor_cells, 2u);
  ASSERT_EQ(check.under_floor.size(), 1u);
  EXPECT_EQ(check.under_floor[0].shape, "f32 rows=2048 width=8192");
  EXPECT_EQ(check.under_floor[0].fastest_node, "_softmax_cuda_0");
  EXPECT_NEAR(check.under_floor[0].fraction, 0.80, 1e-9);
  EXPECT_NEAR(check.under_floor[0].aten_fraction, 0.40, 1e-9);
  EXPECT_DOUBLE_EQ(check.under_floor[0].goal, 0.85);
  EXPECT_TRUE(has_flag(report.rows[0], "under the floor goal"));
  EXPECT_TRUE(has_flag(report.rows[1], "under the floor goal")) << "every row of the cell is flagged";
  EXPECT_TRUE(report.rows[2].flags.empty());
  EXPECT_TRUE(report.rows[3].flags.empty());
  EXPECT_TRUE(report.rows[4].flags.empty());

  check_grid_goals(report);
  EXPECT_EQ(report.rows[0].flags.size(), 1u) << "a second check adds no second flag";
}

TEST(GridGoals, HoldsBf16RowsOf1024To131072ToNinetyPercent) {
  const double bytes = 64 * kMiB;
  BenchReport report = grid_report({
      grid_row("_softmax_cuda_0", "bf16", 2048, 1024, bytes, ns_at(bytes, 0.88)),
      grid_row("_softmax_cuda_0", "bf16", 256, 131072, bytes, ns_at(bytes, 0.88)),
      grid_row("_softmax_cuda_0", "bf16", 128, 151936, bytes, ns_at(bytes, 0.88)),
      grid_row("_softmax_cuda_0", "f16", 2048, 4096, bytes, ns_at(bytes, 0.88)),
  });
  const GridGoalCheck check = check_grid_goals(report);
  ASSERT_EQ(check.under_floor.size(), 2u);  // in the order of their features
  EXPECT_EQ(check.under_floor[0].shape, "bf16 rows=256 width=131072");
  EXPECT_DOUBLE_EQ(check.under_floor[0].goal, 0.90);
  EXPECT_EQ(check.under_floor[1].shape, "bf16 rows=2048 width=1024");
  EXPECT_TRUE(report.rows[2].flags.empty()) << "wider than 131072: 85%";
  EXPECT_TRUE(report.rows[3].flags.empty()) << "float16: 85%";
}

TEST(GridGoals, LeavesOutComputeBoundCellsAsRoutedRowsAndBenchShapes) {
  const double bytes = 64 * kMiB;
  BenchRow compute_bound = grid_row("_softmax_cuda_0", "f32", 2048, 8192, bytes, ns_at(bytes, 0.1));
  compute_bound.flops = 5 * bytes;
  BenchRow as_routed = grid_row("_softmax_cuda_0", "f32", 4096, 8192, bytes, ns_at(bytes, 0.1));
  as_routed.fastest = "aten";
  BenchRow bench_shape = grid_row("_softmax_cuda_0", "f32", 8192, 8192, bytes, ns_at(bytes, 0.1));
  bench_shape.features.clear();
  BenchRow untimed = grid_row("_softmax_cuda_0", "f32", 16384, 8192, bytes, ns_at(bytes, 0.1));
  untimed.timed = false;
  BenchReport report = grid_report({compute_bound, as_routed, bench_shape, untimed});
  const GridGoalCheck check = check_grid_goals(report);
  EXPECT_EQ(check.floor_cells, 0u);
  EXPECT_TRUE(check.under_floor.empty());
  for (const BenchRow& row : report.rows) EXPECT_TRUE(row.flags.empty()) << row.shape;
}

TEST(GridGoals, AnOddWidthMayCostItsBytesOverTheNextMultipleOf8) {
  const double bytes = 64 * kMiB;
  const double aligned_ns = ns_at(bytes, 0.95);
  const double allowed_ns = aligned_ns * 4104.0 / 4096.0 * 1.02;
  BenchReport report = grid_report({
      grid_row("_softmax_cuda_0", "f32", 2048, 4096, bytes, aligned_ns),
      grid_row("_softmax_cuda_0", "f32", 2048, 4097, bytes, allowed_ns * 0.99),
      grid_row("_softmax_cuda_0", "f32", 8192, 4096, bytes, aligned_ns),
      grid_row("_softmax_cuda_0", "f32", 8192, 4097, bytes, allowed_ns * 1.01),
      grid_row("_softmax_cuda_0", "f32", 32768, 4097, bytes, allowed_ns * 3),  // no aligned neighbour
  });
  const GridGoalCheck check = check_grid_goals(report);
  EXPECT_EQ(check.odd_cells, 2u);
  ASSERT_EQ(check.odd_over.size(), 1u);
  EXPECT_EQ(check.odd_over[0].shape, "f32 rows=8192 width=4097");
  EXPECT_EQ(check.odd_over[0].aligned_width, 4096);
  EXPECT_NEAR(check.odd_over[0].allowed_ns, allowed_ns, 1e-6 * allowed_ns);
  EXPECT_FALSE(has_flag(report.rows[1], "odd width over its bytes"));
  EXPECT_TRUE(has_flag(report.rows[3], "odd width over its bytes"));
  EXPECT_FALSE(has_flag(report.rows[4], "odd width over its bytes"));
}

// A decode row whose routed call takes `device_ns` on the GPU and `host_ns` of the
// caller's thread, aten's call `aten_device_ns` and `aten_host_ns`.
BenchRow decode_row(int64_t rows, int64_t width, double device_ns, double host_ns, double aten_device_ns,
                    double aten_host_ns) {
  BenchRow row = grid_row("_softmax_cuda_0", "bf16", rows, width, 1 << 20, device_ns);
  row.original = {aten_device_ns, aten_device_ns, aten_device_ns, 20, 1};
  row.host_routed_ns = host_ns;
  row.host_original_ns = aten_host_ns;
  return row;
}

TEST(GridGoals, ADecodeCallCostsTheLongerOfItsDeviceAndHostTime) {
  BenchRow declined = decode_row(8, 2048, 5000, 20000, 6000, 7000);
  declined.accepted = false;
  BenchReport report = grid_report({
      decode_row(8, 4096, 5000, 9000, 10000, 7000),    // 9 us against 10: faster
      decode_row(8, 8192, 5000, 12000, 6000, 7000),    // 12 us against 7: slower
      decode_row(64, 8192, 5000, 7100, 7000, 7000),    // within 2%
      decode_row(128, 8192, 5000, 12000, 6000, 7000),  // not a decode row
      declined,                                        // does not fire
  });
  const GridGoalCheck check = check_grid_goals(report);
  EXPECT_EQ(check.decode_calls, 3u);
  ASSERT_EQ(check.decode_slower.size(), 1u);
  EXPECT_EQ(check.decode_slower[0].shape, "bf16 rows=8 width=8192");
  EXPECT_DOUBLE_EQ(check.decode_slower[0].routed_ns, 12000);
  EXPECT_DOUBLE_EQ(check.decode_slower[0].original_ns, 7000);
  EXPECT_TRUE(has_flag(report.rows[1], "decode call slower than aten"));
  for (size_t i : {0, 2, 3, 4}) EXPECT_TRUE(report.rows[i].flags.empty()) << report.rows[i].shape;
}

class ReportFile : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }

  std::string write(const std::string& text) {
    std::ofstream(path_, std::ios::binary) << text;
    return path_;
  }

  std::string error_of(const std::string& text) {
    try {
      read_bench_report(write(text));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  std::string path_ = std::filesystem::temp_directory_path() / ("native_ops_report_" + std::to_string(getpid()));
};

TEST_F(ReportFile, ReadsBackWhatBenchJsonWrote) {
  const double bytes = 64 * kMiB;
  BenchReport report = grid_report({grid_row("_softmax_cuda_0", "bf16", 2048, 4097, bytes, ns_at(bytes, 0.5)),
                                    grid_row("_softmax_triton_0", "bf16", 2048, 4097, bytes, ns_at(bytes, 0.4))});
  report.rows[1].accepted = false;
  report.rows[1].decline_reason = "odd width";
  report.rows[1].speedup_low = 0.9;
  report.rows[1].host_overhead_high = 12.5;
  report.rows[1].fastest = "aten";
  report.rows[1].routed_over_fastest_high = 1.5;
  check_grid_goals(report);
  const std::string json = bench_json(report);
  EXPECT_EQ(bench_json(read_bench_report(write(json))), json);
}

TEST_F(ReportFile, NamesWhatIsWrongAndWhere) {
  EXPECT_NE(error_of("{\"version\": 1, \"devices\": [], \"rows\": [").find("is not JSON"), std::string::npos);
  EXPECT_NE(error_of("{\"version\": 2, \"devices\": [], \"rows\": []}").find("/version: expected 1"),
            std::string::npos);
  EXPECT_NE(error_of("{\"version\": 1, \"devices\": [], \"rows\": [{}]}").find("/rows/0: \"node\" is missing"),
            std::string::npos);
  const double bytes = 64 * kMiB;
  std::string json = bench_json(grid_report({grid_row("_softmax_cuda_0", "f32", 8, 8, bytes, 1000)}));
  json.replace(json.find("\"rounds\": 20"), 12, "\"rounds\": -3");  // the first timing: "impl"
  EXPECT_NE(error_of(json).find("/rows/0/impl/rounds: expected a whole number"), std::string::npos) << error_of(json);
  EXPECT_NE(error_of("[1, 2]").find("give a report that native-ops bench --json-file wrote"), std::string::npos);
}

TEST_F(ReportFile, RefusesWhatIsNotAFile) {
  EXPECT_THROW(
      {
        try {
          read_bench_report(path_ + ".missing");
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("cannot be read"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  EXPECT_THROW(
      {
        try {
          read_bench_report(std::filesystem::temp_directory_path());
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("is not a regular file"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
}

}  // namespace
}  // namespace native_ops
