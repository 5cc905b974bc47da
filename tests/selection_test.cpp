// Selection tables: features, policy version 2 (parsing and refusals), routing by table
// (typed and boxed), explain, bucket merging, and the grids' agreement with the features.
#include <ATen/core/Tensor.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/_softmax_ops.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/hypot.h>
#include <ATen/ops/hypot_ops.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>

#include "native_ops/report.h"
#include "native_ops/selection.h"
#include "native_ops/testing/op_db.h"
#include "native_ops/testing/tune.h"
#include "support.h"

namespace native_ops {
namespace {

using c10::DispatchKey;

// _softmax at CPU gets two test nodes after the built-in cpp one; each accepts what its
// flag says and counts its runs in hits.
class Selection : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::register_test_dsls();
    for (const char* dsl : {"alpha", "beta"}) {
      register_op_override<at::_ops::_softmax>(
          dsl, DispatchKey::CPU,
          [dsl](const at::Tensor&, int64_t, bool) -> Verdict {
            return std::string(dsl) == "alpha" ? Verdict(alpha_accepts) : Verdict(true);
          },
          [](const at::Tensor& self, int64_t dim, bool half) {
            return call_original<at::_ops::_softmax>(self, dim, half);
          });
    }
    init();
  }

  static Policy table(const std::string& cells_f32, const std::string& extra = "") {
    return parse_policy(R"({"version": 2, "select": {"_softmax@CPU": {"features": ["rows", "width"],)" + extra +
                            R"( "tables": {"f32": {"edges": {"rows": [], "width": [100, 1000]}, "cells": )" +
                            cells_f32 + R"(, "margins": [1.5, 1.0, 2.0]}}}}})",
                        "table.json");
  }

  // Which of the three _softmax nodes ran a call of f32[rows, width] (or "aten").
  static std::string runs(int64_t rows, int64_t width, c10::ScalarType dtype = at::kFloat) {
    const uint64_t cpp = testing::hits("_softmax_cpp_0"), alpha = testing::hits("_softmax_alpha_0"),
                   beta = testing::hits("_softmax_beta_0");
    at::_softmax(at::randn({rows, width}).to(dtype), -1, false);
    if (testing::hits("_softmax_cpp_0") > cpp) return "_softmax_cpp_0";
    if (testing::hits("_softmax_alpha_0") > alpha) return "_softmax_alpha_0";
    if (testing::hits("_softmax_beta_0") > beta) return "_softmax_beta_0";
    return "aten";
  }

  static inline bool alpha_accepts = true;
};

TEST_F(Selection, TheCellOfTheCallsFeaturesPicksTheNode) {
  apply_policy(table(R"(["_softmax_alpha_0", "aten", "_softmax_beta_0"])"));
  EXPECT_EQ(runs(4, 50), "_softmax_alpha_0");      // width bucket [-inf, 100)
  EXPECT_EQ(runs(4, 500), "aten");                 // [100, 1000): aten, though every node accepts
  EXPECT_EQ(runs(4, 1000), "_softmax_beta_0");     // an edge starts its bucket
  EXPECT_EQ(runs(4096, 5000), "_softmax_beta_0");  // cpp accepts and comes first, but the table decides
}

TEST_F(Selection, ACellWhoseNodeDeclinesGoesToAtenNotToTheNextNode) {
  apply_policy(table(R"(["_softmax_alpha_0", "aten", "_softmax_beta_0"])"));
  alpha_accepts = false;
  EXPECT_EQ(runs(4, 50), "aten");
  alpha_accepts = true;
}

TEST_F(Selection, ADtypeTheTableLacksIsRoutedInOrder) {
  apply_policy(table(R"(["aten", "aten", "aten"])"));
  EXPECT_EQ(runs(4, 50, at::kDouble), "_softmax_alpha_0");  // cpp takes float32 only
}

TEST_F(Selection, ACellNamingADroppedNodeIsRoutedInOrder) {
  Policy policy = table(R"(["_softmax_beta_0", "aten", "aten"])");
  policy.disable.push_back({"", "beta", "", ""});
  apply_policy(policy);
  EXPECT_EQ(runs(4, 50), "_softmax_alpha_0");  // cpp declines fewer than 65536 elements
}

TEST_F(Selection, ATableTunedOnAnotherDeviceIsRoutedInOrder) {
  apply_policy(table(R"(["aten", "aten", "aten"])", R"( "device": {"name": "NVIDIA H200", "capability": "9.0"},)"));
  EXPECT_EQ(runs(4, 50), "_softmax_alpha_0");  // a CPU call is on no CUDA device
}

TEST_F(Selection, ResetOrderAndAnotherPolicyRemoveTheTable) {
  apply_policy(table(R"(["aten", "aten", "aten"])"));
  EXPECT_TRUE(testing::graph("_softmax").selection.has_value());
  EXPECT_EQ(testing::graph("_softmax").selection_source, "table.json");
  reset_order();
  EXPECT_FALSE(testing::graph("_softmax").selection.has_value());
  EXPECT_EQ(runs(4, 50), "_softmax_alpha_0");
  apply_policy(table(R"(["aten", "aten", "aten"])"));
  apply_policy(parse_policy(R"({"version": 1})"));
  EXPECT_EQ(runs(4, 50), "_softmax_alpha_0");
}

TEST_F(Selection, ThePlanShowsTheTableBeforeAndAfter) {
  const PolicyPlan plan = plan_policy(table(R"(["aten", "aten", "aten"])"));
  const auto change = std::find_if(plan.changes.begin(), plan.changes.end(),
                                   [](const GraphChange& c) { return c.graph == "aten::_softmax @ CPU"; });
  ASSERT_NE(change, plan.changes.end());
  EXPECT_EQ(change->table_before, "");
  EXPECT_EQ(change->table_after, "rows x width: f32 1x3 buckets");
}

TEST_F(Selection, ExplainNamesTheBucketTheCellAndItsMargin) {
  apply_policy(table(R"(["_softmax_alpha_0", "aten", "_softmax_beta_0"])"));
  Explanation e = explain("_softmax", DispatchKey::CPU, {at::zeros({3, 2000}), int64_t{-1}, false});
  ASSERT_TRUE(e.selection.has_value());
  EXPECT_TRUE(e.selection->applies);
  EXPECT_EQ(e.selection->bucket, "rows [-inf, inf), width [1000, inf)");
  EXPECT_EQ(e.selection->cell, "_softmax_beta_0");
  EXPECT_DOUBLE_EQ(e.selection->margin, 2.0);
  EXPECT_EQ(e.selection->features, (std::vector<std::pair<std::string, int64_t>>{{"rows", 3}, {"width", 2000}}));
  EXPECT_EQ(e.fires, "_softmax_beta_0");
  e = explain("_softmax", DispatchKey::CPU, {at::zeros({3, 200}), int64_t{-1}, false});
  EXPECT_EQ(e.selection->cell, "aten");
  EXPECT_FALSE(e.fires.has_value());
  e = explain("_softmax", DispatchKey::CPU, {at::zeros({3, 200}, at::kDouble), int64_t{-1}, false});
  EXPECT_FALSE(e.selection->applies);
  EXPECT_EQ(e.selection->why, "the table has no f64 cells");
  EXPECT_EQ(e.fires, "_softmax_alpha_0");
  EXPECT_NE(explanation_json(e).find("\"why\": \"the table has no f64 cells\""), std::string::npos);
}

std::string refusal(const std::string& json) {
  return testing::error_of([&] { apply_policy(parse_policy(json, "bad.json")); });
}

TEST_F(Selection, MalformedTablesAreRefusedWithWhereAndWhy) {
  const std::string head = R"({"version": 2, "select": {"_softmax@CPU": {"features": ["rows", "width"], "tables": )";
  EXPECT_NE(refusal(R"({"version": 1, "select": {}})").find("at /select: selection tables need \"version\": 2"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"version": 3})").find("expected 1, or 2"), std::string::npos);
  EXPECT_NE(refusal(R"({"version": 2, "select": {"_softmax": {}}})").find("\"<op>@<KEY>\""), std::string::npos);
  EXPECT_NE(refusal(head + R"({"f32": {"edges": {"rows": [], "width": [9, 3]}, "cells": ["aten"]}}}}})")
                .find("the edges of \"width\" must increase: 9 then 3"),
            std::string::npos);
  EXPECT_NE(refusal(head + R"({"f32": {"edges": {"rows": [], "width": [9]}, "cells": ["aten"]}}}}})")
                .find("has 1 cells; its edges make 2 buckets"),
            std::string::npos);
  EXPECT_NE(refusal(head + R"({"f32": {"edges": {"rows": []}, "cells": ["aten"]}}}}})")
                .find("the edges of \"width\" are missing"),
            std::string::npos);
  EXPECT_NE(refusal(head + R"({"f33": {"edges": {"rows": [], "width": []}, "cells": ["aten"]}}}}})")
                .find("at /select/_softmax@CPU/tables/f33: unknown dtype 'f33'"),
            std::string::npos);
  EXPECT_NE(refusal(head + R"({"f32": {"edges": {"rows": [], "width": []}, "cells": ["aten"], "margins": [1, 2]}}}}})")
                .find("2 margins for 1 cells"),
            std::string::npos);
  EXPECT_NE(refusal(head + R"({"f32": {"edges": {"rows": [], "width": []}, "cells": ["_softmax_alpa_0"]}}}}})")
                .find("cells/0: \"_softmax_alpa_0\" is neither \"aten\" nor a node of aten::_softmax @ CPU. Did you "
                      "mean: _softmax_alpha_0"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"version": 2, "select": {"_softmax@CPU": {"features": ["width", "rows"], "tables": {}}}})")
                .find("the features must be those of aten::_softmax, in order: rows, width"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"version": 2, "select": {"mul@CPU": {"features": ["n"], "tables": {}}}})")
                .find("no override of aten::mul is registered at CPU"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"version": 2, "select": {"_softmax@XLA": {"features": ["rows", "width"], "tables": {}}}})")
                .find("no override of aten::_softmax is registered at XLA"),
            std::string::npos);
  EXPECT_FALSE(testing::graph("_softmax").selection.has_value()) << "a refused policy left a table";
}

TEST_F(Selection, FeaturesAreDeclaredOncePerOpWithSensibleNames) {
  const auto features = [](const at::Tensor& self, int64_t, bool) { return row_features(self, 1); };
  EXPECT_NE(testing::error_of([&] {
              register_shape_features<at::_ops::_softmax>({"rows", "width"}, features);
            }).find("features of aten::_softmax are registered already"),
            std::string::npos);
  const auto boxed = [](const BoxedArgs&) { return ShapeFeatures{}; };
  EXPECT_NE(
      testing::error_of([&] { register_shape_features("aten", "hypot", {}, boxed); }).find("at least one feature"),
      std::string::npos);
  EXPECT_NE(testing::error_of([&] {
              register_shape_features("aten", "hypot", {"n", "n"}, boxed);
            }).find("\"n\" is named twice"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] {
              register_shape_features("aten", "hypot", {"a", "b", "c", "d", "e"}, boxed);
            }).find("4 at most"),
            std::string::npos);
}

// A boxed graph routes by a table through boxed features.
TEST(SelectionBoxed, ABoxedGraphPicksByItsFeatures) {
  testing::register_test_dsls();
  for (const char* dsl : {"alpha", "beta"}) {
    register_op_override(
        dsl, "aten", "hypot", DispatchKey::CPU, [](const BoxedArgs&) { return true; },
        [](const c10::OperatorHandle& op, torch::jit::Stack& stack) { call_original_boxed(op, stack); });
  }
  register_shape_features("aten", "hypot", {"numel"}, [](const BoxedArgs& args) {
    const at::Tensor& self = args[0].toTensor();
    ShapeFeatures features;
    features.dtype = self.scalar_type();
    features.count = 1;
    features.values[0] = self.numel();
    return features;
  });
  init();
  apply_policy(parse_policy(R"({"version": 2, "select": {"hypot@CPU": {"features": ["numel"], "tables": {"f32":
      {"edges": {"numel": [10]}, "cells": ["hypot_beta_0", "aten"]}}}}})"));
  const uint64_t alpha = testing::hits("hypot_alpha_0"), beta = testing::hits("hypot_beta_0");
  at::hypot(at::ones({4}), at::ones({4}));
  EXPECT_EQ(testing::hits("hypot_beta_0"), beta + 1);
  at::hypot(at::ones({40}), at::ones({40}));
  EXPECT_EQ(testing::hits("hypot_alpha_0"), alpha);
  EXPECT_EQ(testing::hits("hypot_beta_0"), beta + 1);
  at::hypot(at::ones({40}, at::kDouble), at::ones({40}, at::kDouble));
  EXPECT_EQ(testing::hits("hypot_alpha_0"), alpha + 1);
}

TEST(Buckets, AnEdgeGoesWhereTheWinnerChangesAtTheGeometricMiddle) {
  const SelectionGrid grid =
      merge_into_buckets(at::kFloat, {{1, 8, 64, 512}}, {"a", "a", "b", "b"}, {1.2, 1.1, 1.5, 1.4});
  EXPECT_EQ(grid.edges, (std::vector<std::vector<int64_t>>{{23}}));
  EXPECT_EQ(grid.cells, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(grid.margins, (std::vector<double>{1.1, 1.4}));  // the smallest of the merged points
  EXPECT_EQ(bucket_of(grid.edges[0], 22), 0u);
  EXPECT_EQ(bucket_of(grid.edges[0], 23), 1u);
}

TEST(Buckets, AdjacentValuesGetAnEdgeBetweenThem) {
  const SelectionGrid grid = merge_into_buckets(at::kFloat, {{4096, 4097}}, {"a", "aten"}, {1.2, 1.0});
  EXPECT_EQ(grid.edges, (std::vector<std::vector<int64_t>>{{4097}}));
}

TEST(Buckets, TwoFeaturesMergeRowsThenWidthsAndUnmeasuredPointsTakeTheirNeighbours) {
  // rows {1, 64, 4096} x width {768, 50257}; "" was not measured.
  const SelectionGrid grid = merge_into_buckets(at::kBFloat16, {{1, 64, 4096}, {768, 50257}},
                                                {"x", "aten", "x", "", "y", "aten"}, {1.3, 1, 1.2, 1, 1.1, 1});
  EXPECT_EQ(grid.edges, (std::vector<std::vector<int64_t>>{{512}, {6213}}));
  EXPECT_EQ(grid.cells, (std::vector<std::string>{"x", "aten", "y", "aten"}));
  EXPECT_EQ(grid.margins, (std::vector<double>{1.2, 1, 1.1, 1}));
  // A grid with nothing measured anywhere is aten's.
  EXPECT_EQ(merge_into_buckets(at::kFloat, {{1, 2}}, {"", ""}, {1, 1}).cells, (std::vector<std::string>{"aten"}));
  EXPECT_NE(testing::error_of([] {
              merge_into_buckets(at::kFloat, {{1, 2}}, {"a"}, {1});
            }).find("for a grid of 2"),
            std::string::npos);
}

TEST(Buckets, ThePolicyTuneWritesParsesBack) {
  PolicySelection selection{"_softmax", "CPU", {}};
  selection.table.features = {"rows", "width"};
  selection.table.tuned_with = {{"torch", "2.11.0"}};
  selection.table.grids.push_back(merge_into_buckets(at::kFloat, {{1, 64}, {127, 4096}},
                                                     {"aten", "_softmax_cpp_0", "aten", "aten"}, {1, 1.25, 1, 1}));
  const Policy policy = parse_policy(selection_policy_json({selection}, "Tuned by a test"), "tuned.json");
  ASSERT_EQ(policy.select.size(), 1u);
  EXPECT_EQ(policy.version, 2);
  EXPECT_EQ(policy.select[0].table.grids[0].cells, selection.table.grids[0].cells);
  EXPECT_EQ(policy.select[0].table.grids[0].edges, selection.table.grids[0].edges);
  EXPECT_EQ(policy.select[0].table.tuned_with, selection.table.tuned_with);
}

// The grids the op database times and the features the router computes must agree, or a
// tuned table would file calls under the wrong bucket.
TEST(GridFeatures, TensorFeaturesTakeTheDtypeTheDeviceAndAtMostTheMaximumOfValues) {
  const ShapeFeatures features = tensor_features(at::empty({2, 3}, at::kBFloat16), {7, 8, 9, 10, 11});
  EXPECT_EQ(features.dtype, at::kBFloat16);
  EXPECT_EQ(features.cuda_device, -1);
  ASSERT_EQ(features.count, kMaxShapeFeatures);
  EXPECT_EQ(features.values, (std::array<int64_t, kMaxShapeFeatures>{7, 8, 9, 10}));
}

TEST(GridFeatures, EveryGridCellHasTheFeaturesOfItsPoint) {
  init();
  size_t checked = 0;
  for (const OpEntry& entry : op_entries()) {
    if (!entry.grid) continue;
    const std::optional<std::vector<std::string>> names = shape_feature_names(entry.op_symbol);
    ASSERT_TRUE(names.has_value()) << entry.op_symbol << " has a grid but no shape features";
    for (const c10::DeviceType type : entry.devices) {
      const ShapeGrid grid = entry.grid(c10::Device(type));
      std::vector<std::string> axes;
      for (const GridAxis& axis : grid.axes) axes.push_back(axis.name);
      EXPECT_EQ(axes, *names) << entry.op_symbol;
      std::vector<size_t> at(grid.axes.size(), 0);  // one grid point, by index along each axis
      for (bool more = true; more;) {
        std::vector<int64_t> point;
        for (size_t a = 0; a < at.size(); ++a) point.push_back(grid.axes[a].values[at[a]]);
        const ShapeFeatures features =
            shape_features_of(entry.op_symbol, grid.make_arguments(point, entry.dtypes[0], c10::Device("meta")));
        EXPECT_EQ(std::vector<int64_t>(features.values.begin(), features.values.begin() + features.count), point)
            << entry.op_symbol;
        EXPECT_EQ(features.dtype, entry.dtypes[0]);
        ++checked;
        more = false;
        for (size_t a = at.size(); a-- > 0 && !more;) {
          more = ++at[a] < grid.axes[a].values.size();
          if (!more) at[a] = 0;
        }
      }
    }
  }
  EXPECT_GT(checked, 100u);
}

}  // namespace
}  // namespace native_ops
