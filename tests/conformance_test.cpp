// The op database and the CPU conformance sweep of every built-in override.
#include <algorithm>
#include <set>

#include <ATen/Context.h>
#include <gtest/gtest.h>

#include "native_ops/native_ops.h"
#include "native_ops/testing/conformance.h"
#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"

namespace native_ops {
namespace {

std::vector<NodeInfo> builtin_nodes() {
  std::vector<NodeInfo> nodes;
  for (const GraphInfo& graph : graphs()) {
    for (const NodeInfo& node : graph.nodes) {
      if (node.origin == "built-in") nodes.push_back(node);
    }
  }
  return nodes;
}

TEST(OpDatabase, EveryBuiltinOverrideHasAnEntry) {
  const std::vector<NodeInfo> nodes = builtin_nodes();
  ASSERT_FALSE(nodes.empty());
  for (const NodeInfo& node : nodes) {
    EXPECT_FALSE(op_entries_for(node.op_symbol, node.dsl).empty())
        << node.id << ": no op database entry for " << node.op_symbol << " tagged " << node.dsl;
  }
}

TEST(OpDatabase, BuiltinEntriesCoverEverySampleClass) {
  for (const OpEntry& entry : op_entries()) {
    std::set<SampleClass> seen;
    bool large_enough = false;
    // Classes do not depend on the device: CUDA entries' samples are made on the CPU here.
    for (c10::ScalarType dtype : entry.dtypes) {
      for (const Sample& sample : entry.samples(c10::Device(c10::kCPU), dtype)) {
        seen.insert(sample.sample_class);
        if (sample.sample_class != SampleClass::large) continue;
        for (const c10::IValue& value : sample.arguments) {
          large_enough |= value.isTensor() && value.toTensor().numel() >= (int64_t{1} << 20);
        }
      }
    }
    for (SampleClass sample_class : all_sample_classes()) {
      EXPECT_TRUE(seen.count(sample_class) || entry.inapplicable_classes.count(sample_class))
          << entry.op_symbol << " has no " << to_string(sample_class) << " sample and does not say why";
    }
    EXPECT_TRUE(large_enough) << entry.op_symbol << ": no large sample has an input of 1M elements";
  }
}

TEST(OpDatabase, BuiltinEntriesHaveErrorSamplesAndCosts) {
  for (const OpEntry& entry : op_entries()) {
    ASSERT_TRUE(entry.error_samples) << entry.op_symbol;
    EXPECT_FALSE(entry.error_samples(c10::Device(c10::kCPU)).empty()) << entry.op_symbol;
    const std::vector<BenchCase> cases = entry.bench_cases(c10::Device(c10::kCPU));
    EXPECT_FALSE(cases.empty()) << entry.op_symbol;
    const bool on_cpu = std::count(entry.devices.begin(), entry.devices.end(), c10::DeviceType::CPU) > 0;
    for (const BenchCase& bench : cases) {
      if (!on_cpu) break;  // GPU shapes take gigabytes: the cost model is checked on the CPU entries' shapes
      const Cost cost = entry.cost(bench.make_arguments());
      EXPECT_GT(cost.bytes, 0) << entry.op_symbol << " " << bench.shape;
    }
  }
}

TEST(OpDatabase, RefusesBadEntries) {
  OpEntry entry = op_entries_for("bmm", "cpp").at(0);
  EXPECT_THROW(
      {
        try {
          register_op_entry(entry);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("already has an entry for dsl 'cpp'"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  entry.op_symbol = "bmmm";
  try {
    register_op_entry(entry);
    FAIL() << "an unknown op was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bmm"), std::string::npos) << e.what();
  }
  entry.op_symbol = "addmm";
  entry.samples = nullptr;
  try {
    register_op_entry(entry);
    FAIL() << "an entry without samples was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no sample generator"), std::string::npos) << e.what();
  }
  EXPECT_EQ(op_entries_for("addmm", "cpp").size(), 0u);
}

TEST(OpDatabase, DefaultTolerancesAreAssertClosesTable) {
  EXPECT_DOUBLE_EQ(default_tolerance(at::kFloat).rtol, 1.3e-6);
  EXPECT_DOUBLE_EQ(default_tolerance(at::kFloat).atol, 1e-5);
  EXPECT_DOUBLE_EQ(default_tolerance(at::kBFloat16).rtol, 1.6e-2);
  EXPECT_DOUBLE_EQ(default_tolerance(at::kHalf).rtol, 1e-3);
  EXPECT_DOUBLE_EQ(default_tolerance(at::kDouble).atol, 1e-7);
  EXPECT_DOUBLE_EQ(default_tolerance(at::kInt).atol, 0);
}

TEST(Samples, ExtremesWriteWhatTheFillAsksFor) {
  samples::Fill fill = samples::with_extremes(at::kFloat);
  const at::Tensor all = samples::make_tensor({64, 64}, at::kFloat, c10::Device(c10::kCPU), fill);
  EXPECT_EQ(all.isinf().sum().item<int64_t>(), 2);  // +inf and -inf
  EXPECT_EQ(all.isnan().sum().item<int64_t>(), 1);
  EXPECT_EQ(all.abs().eq(samples::large_magnitude(at::kFloat)).sum().item<int64_t>(), 2);

  fill.inf = false;  // the norms' entries: a row holding inf has no defined mean
  const at::Tensor finite = samples::make_tensor({64, 64}, at::kFloat, c10::Device(c10::kCPU), fill);
  EXPECT_EQ(finite.isinf().sum().item<int64_t>(), 0);
  EXPECT_EQ(finite.isnan().sum().item<int64_t>(), 1);
  EXPECT_EQ(finite.abs().eq(samples::large_magnitude(at::kFloat)).sum().item<int64_t>(), 2);
}

// One test per built-in node and dtype: ctest runs the CPU sweep everywhere and the CUDA
// sweep where a CUDA device and the node's DSL are (it skips, with the reason, elsewhere).
struct SweepCase {
  std::string node_id;
  std::string dsl;
  std::string op_symbol;
  c10::DeviceType device;
  c10::ScalarType dtype;
};

std::vector<SweepCase> sweep_cases() {
  std::vector<SweepCase> cases;
  for (const NodeInfo& node : builtin_nodes()) {
    const c10::DeviceType device = node.key == c10::DispatchKey::CUDA ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
    for (const OpEntry& entry : op_entries_for(node.op_symbol, node.dsl)) {
      for (c10::ScalarType dtype : entry.dtypes) cases.push_back({node.id, node.dsl, node.op_symbol, device, dtype});
    }
  }
  return cases;
}

void PrintTo(const SweepCase& c, std::ostream* out) { *out << c.node_id << " " << dtype_name(c.dtype); }

class Sweep : public ::testing::TestWithParam<SweepCase> {};

TEST_P(Sweep, MatchesAten) {
  const SweepCase& c = GetParam();
  const std::optional<std::string> restricted = restrict_to_dsl_from_env();
  if (restricted && *restricted != c.dsl) GTEST_SKIP() << "NATIVE_OPS_RESTRICT_TO_DSL=" << *restricted;
  const std::optional<NodeInfo> node = find_node(c.node_id);
  ASSERT_TRUE(node.has_value());
  if (node->state == NodeState::unavailable) GTEST_SKIP() << node->reason;
  if (c.device == c10::DeviceType::CUDA && !at::globalContext().hasCUDA()) {
    GTEST_SKIP() << "no CUDA device in this process (CPU-only machine): a node of the CUDA key cannot be swept here";
  }
  init();
  SweepOptions options;
  options.dsl = c.dsl;
  options.op_symbol = c.op_symbol;
  options.devices = {c.device};
  options.dtypes = {c.dtype};
  std::vector<SweepUnit> units;
  for (const SweepUnit& unit : plan_sweep(options)) {
    if (unit.node_id == c.node_id) units.push_back(unit);
  }
  ASSERT_EQ(units.size(), 1u);
  size_t samples = 0;
  for (const SampleResult& result : run_sweep(units, options)) {
    samples += result.sample_class != "coverage";
    for (const Mismatch& m : result.mismatches) {
      ADD_FAILURE() << result.sample_class << " " << result.sample << ": " << m.check << ": " << m.message;
    }
  }
  EXPECT_GT(samples, 0u);
}

INSTANTIATE_TEST_SUITE_P(Builtins, Sweep, ::testing::ValuesIn(sweep_cases()),
                         [](const ::testing::TestParamInfo<SweepCase>& info) {
                           return info.param.node_id + "_" + dtype_name(info.param.dtype);
                         });

}  // namespace
}  // namespace native_ops
