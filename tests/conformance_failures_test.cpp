// Each check of the conformance sweep can fail: a deliberately wrong override, registered
// only inside its test (dsl "alpha"), is caught for every class of error.
#include <atomic>
#include <set>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/floor.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/mul_ops.h>
#include <ATen/ops/multinomial_ops.h>
#include <ATen/ops/nan_to_num.h>
#include <ATen/ops/native_layer_norm.h>
#include <ATen/ops/native_layer_norm_backward_ops.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/sub_ops.h>
#include <ATen/ops/topk_ops.h>
#include <ATen/ops/zeros_like.h>
#include <gtest/gtest.h>

#include "native_ops/native_ops.h"
#include "native_ops/testing/conformance.h"
#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"
#include "support.h"

namespace native_ops {
namespace {

using MulCond = TypedCond<at::_ops::mul_Tensor>;
using MulImpl = TypedImpl<at::_ops::mul_Tensor>;
using MulInPlaceImpl = TypedImpl<at::_ops::mul__Tensor>;

// The cond of a correct elementwise override: same-shape contiguous float32.
Verdict same_shape_f32(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != at::kFloat || b.scalar_type() != at::kFloat) return decline("not float32");
  if (a.sizes() != b.sizes()) return decline("broadcast");
  if (!a.is_contiguous() || !b.is_contiguous()) return decline("not contiguous");
  return true;
}

at::Tensor make(std::vector<int64_t> sizes, uint64_t seed, double extremes = 0) {
  samples::Fill fill;
  fill.seed = seed;
  fill.extreme_magnitude = extremes;
  return samples::make_tensor(sizes, at::kFloat, c10::Device(c10::kCPU), fill);
}

// Samples of a binary elementwise op: three meant for `node` (typical, one element,
// extreme values with NaN), one broadcast that is meant for no node.
std::vector<Sample> binary_samples(const std::string& node) {
  return {
      {"f32[8,5] * f32[8,5]", SampleClass::typical, {make({8, 5}, 1), make({8, 5}, 2)}, {node}},
      {"f32[1] * f32[1]", SampleClass::one_element, {make({1}, 3), make({1}, 4)}, {node}},
      {"f32[4,9] * f32[4,9], extremes", SampleClass::extreme_values, {make({4, 9}, 5, 1e30), make({4, 9}, 6)}, {node}},
      {"f32[8,5] * f32[5]", SampleClass::expanded, {make({8, 5}, 7), make({5}, 8)}, {}},
  };
}

// Registers an op database entry (tagged alpha) and sweeps `node` with it.
std::vector<SampleResult> sweep(const std::string& op_symbol, const std::string& node,
                                std::function<std::vector<Sample>()> samples, std::vector<ErrorSample> errors = {},
                                const std::function<void(OpEntry&)>& adjust = {}) {
  OpEntry entry;
  entry.op_symbol = op_symbol;
  entry.dsls = {"alpha"};
  entry.devices = {c10::DeviceType::CPU};
  entry.dtypes = {at::kFloat};
  entry.differentiable = true;
  entry.samples = [samples](c10::Device, c10::ScalarType) { return samples(); };
  entry.error_samples = [errors](c10::Device) { return errors; };
  entry.cost = [](const torch::jit::Stack&) { return Cost{}; };
  entry.bench_cases = [](c10::Device) { return std::vector<BenchCase>{}; };
  if (adjust) adjust(entry);
  register_op_entry(std::move(entry));
  init();
  SweepOptions options;
  options.dsl = "alpha";
  options.op_symbol = op_symbol;
  std::vector<SweepUnit> units = plan_sweep(options);
  EXPECT_EQ(units.size(), 1u);
  EXPECT_EQ(units.at(0).node_id, node);
  return run_sweep(units, options);
}

std::vector<SampleResult> sweep_mul(MulCond cond, MulImpl impl, std::vector<ErrorSample> errors = {}) {
  testing::register_test_dsls();
  const std::string node = register_op_override<at::_ops::mul_Tensor>("alpha", c10::DispatchKey::CPU, cond, impl);
  return sweep(
      "mul.Tensor", node, [node] { return binary_samples(node); }, std::move(errors));
}

std::vector<SampleResult> sweep_mul_(MulInPlaceImpl impl) {
  testing::register_test_dsls();
  const std::string node = register_op_override<at::_ops::mul__Tensor>(
      "alpha", c10::DispatchKey::CPU, [](at::Tensor& a, const at::Tensor& b) { return same_shape_f32(a, b); }, impl);
  return sweep("mul_.Tensor", node, [node] { return binary_samples(node); });
}

std::set<std::string> failed_checks(const std::vector<SampleResult>& results) {
  std::set<std::string> checks;
  for (const SampleResult& r : results) {
    for (const Mismatch& m : r.mismatches) checks.insert(m.check);
  }
  return checks;
}

const Mismatch* find_mismatch(const std::vector<SampleResult>& results, const std::string& check) {
  for (const SampleResult& r : results) {
    for (const Mismatch& m : r.mismatches) {
      if (m.check == check) return &m;
    }
  }
  return nullptr;
}

std::string all_messages(const std::vector<SampleResult>& results) {
  std::string text;
  for (const SampleResult& r : results) {
    for (const Mismatch& m : r.mismatches) text += r.sample + ": " + m.check + ": " + m.message + "\n";
  }
  return text;
}

at::Tensor correct_mul(const at::Tensor& a, const at::Tensor& b) { return call_original<at::_ops::mul_Tensor>(a, b); }

TEST(ConformanceCatches, NothingWhenTheOverrideIsRight) {
  const auto results = sweep_mul(&same_shape_f32, &correct_mul);
  EXPECT_TRUE(failed_checks(results).empty()) << all_messages(results);
  EXPECT_EQ(results.size(), 5u);  // four samples and the coverage result
}

TEST(ConformanceCatches, WrongValues) {
  const auto results =
      sweep_mul(&same_shape_f32, [](const at::Tensor& a, const at::Tensor& b) { return correct_mul(a, b).add_(1e-3); });
  const Mismatch* m = find_mismatch(results, "values");
  ASSERT_NE(m, nullptr) << all_messages(results);
  EXPECT_NEAR(m->max_abs_error, 1e-3, 1e-4);
  EXPECT_EQ(m->first_index, (std::vector<int64_t>{0, 0}));
  EXPECT_TRUE(failed_checks(results).count("float64")) << all_messages(results);
}

TEST(ConformanceCatches, NanInTheWrongPlace) {
  const auto results = sweep_mul(
      &same_shape_f32, [](const at::Tensor& a, const at::Tensor& b) { return at::nan_to_num(correct_mul(a, b), 0.0); });
  ASSERT_TRUE(failed_checks(results).count("values")) << all_messages(results);
  for (const SampleResult& r : results) {
    EXPECT_EQ(r.outcome == Outcome::failed, r.sample_class == "extreme-values") << r.sample;
  }
}

TEST(ConformanceCatches, WrongDtype) {
  const auto results = sweep_mul(
      &same_shape_f32, [](const at::Tensor& a, const at::Tensor& b) { return correct_mul(a, b).to(at::kDouble); });
  EXPECT_TRUE(failed_checks(results).count("dtype")) << all_messages(results);
}

TEST(ConformanceCatches, WrongShape) {
  const auto results = sweep_mul(
      &same_shape_f32, [](const at::Tensor& a, const at::Tensor& b) { return correct_mul(a, b).reshape({-1}); });
  EXPECT_TRUE(failed_checks(results).count("shape")) << all_messages(results);
}

TEST(ConformanceCatches, WrongDevice) {
  const auto results = sweep_mul(&same_shape_f32, [](const at::Tensor& a, const at::Tensor& b) {
    return at::empty_like(a, a.options().device(c10::kMeta));
  });
  EXPECT_TRUE(failed_checks(results).count("device")) << all_messages(results);
}

TEST(ConformanceCatches, WrongStrides) {
  const auto results = sweep_mul(&same_shape_f32, [](const at::Tensor& a, const at::Tensor& b) {
    const at::Tensor out = correct_mul(a, b);
    return out.dim() == 2 ? out.t().contiguous().t() : out;  // column-major
  });
  EXPECT_EQ(failed_checks(results), std::set<std::string>{"strides"}) << all_messages(results);
}

TEST(ConformanceCatches, AnOutputElementNeverWritten) {
  const auto results = sweep_mul(&same_shape_f32, [](const at::Tensor& a, const at::Tensor& b) {
    at::Tensor out = at::empty_like(a);
    const int64_t n = a.numel();
    out.view({-1}).narrow(0, 0, n - 1).copy_(correct_mul(a, b).view({-1}).narrow(0, 0, n - 1));
    return out;
  });
  const Mismatch* m = find_mismatch(results, "values");
  ASSERT_NE(m, nullptr) << all_messages(results);
  EXPECT_EQ(m->first_index, (std::vector<int64_t>{7, 4})) << m->message;  // the last element of f32[8,5]
}

TEST(ConformanceCatches, InPlaceOpReturningANewTensor) {
  const auto results = sweep_mul_([](at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    static thread_local at::Tensor result;
    result = at::mul(a, b);  // the right values, but not in self
    return result;
  });
  const std::set<std::string> checks = failed_checks(results);
  EXPECT_TRUE(checks.count("in-place")) << all_messages(results);
  EXPECT_TRUE(checks.count("values")) << "self must hold the product: " << all_messages(results);
}

TEST(ConformanceCatches, AWritePastTheOutput) {
  const auto results = sweep_mul_([](at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    call_original<at::_ops::mul__Tensor>(a, b);
    a.data_ptr<float>()[a.numel()] = 42;  // one element past the end
    return a;
  });
  const Mismatch* m = find_mismatch(results, "guard");
  ASSERT_NE(m, nullptr) << all_messages(results);
  EXPECT_NE(m->message.find("1 elements after its last element"), std::string::npos) << m->message;
}

TEST(ConformanceCatches, AWriteIntoAnInput) {
  const auto results = sweep_mul(&same_shape_f32, [](const at::Tensor& a, const at::Tensor& b) {
    at::Tensor out = correct_mul(a, b);
    const_cast<at::Tensor&>(b).data_ptr<float>()[0] += 1;  // scribbles on an input
    return out;
  });
  const Mismatch* m = find_mismatch(results, "guard");
  ASSERT_NE(m, nullptr) << all_messages(results);
  EXPECT_NE(m->message.find("must not write it at all"), std::string::npos) << m->message;
}

TEST(ConformanceCatches, ACondTooWide) {
  const auto results = sweep_mul([](const at::Tensor&, const at::Tensor&) -> Verdict { return true; }, &correct_mul);
  EXPECT_EQ(failed_checks(results), std::set<std::string>{"cond"}) << all_messages(results);
}

TEST(ConformanceCatches, ACondTooNarrow) {
  const auto results = sweep_mul(
      [](const at::Tensor& a, const at::Tensor& b) -> Verdict {
        if (a.numel() > 10) return decline("more than 10 elements");
        return same_shape_f32(a, b);
      },
      &correct_mul);
  const Mismatch* m = find_mismatch(results, "cond");
  ASSERT_NE(m, nullptr) << all_messages(results);
  EXPECT_NE(m->message.find("more than 10 elements"), std::string::npos) << m->message;
}

TEST(ConformanceCatches, ANodeNoSampleIsMeantFor) {
  testing::register_test_dsls();
  const std::string node =
      register_op_override<at::_ops::mul_Tensor>("alpha", c10::DispatchKey::CPU, &same_shape_f32, &correct_mul);
  const auto results = sweep("mul.Tensor", node, [] {
    std::vector<Sample> meant_for_none = binary_samples("");
    for (Sample& sample : meant_for_none) sample.meant_for.clear();
    return meant_for_none;
  });
  const Mismatch* m = find_mismatch(results, "coverage");
  ASSERT_NE(m, nullptr) << all_messages(results);
  EXPECT_NE(m->message.find("not exercised"), std::string::npos) << m->message;
}

TEST(ConformanceCatches, ACondThatChangesItsMind) {
  // Accepts every other call: explain-style checks and routed calls disagree.
  const auto results = sweep_mul(
      [](const at::Tensor& a, const at::Tensor& b) -> Verdict {
        static std::atomic<int> calls{0};
        if (calls++ % 2 == 1) return decline("odd call");
        return same_shape_f32(a, b);
      },
      &correct_mul);
  EXPECT_TRUE(failed_checks(results).count("fired")) << all_messages(results);
}

TEST(ConformanceCatches, AWrongGradient) {
  // The product is right, but computed into self, which autograd saved for backward.
  const auto results = sweep_mul(&same_shape_f32, [](const at::Tensor& a, const at::Tensor& b) {
    at::Tensor self = a;
    return self.mul_(b);
  });
  EXPECT_TRUE(failed_checks(results).count("gradient")) << all_messages(results);
}

TEST(ConformanceCatches, AnInvalidCallAccepted) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const auto results =
      sweep_mul([](const at::Tensor&, const at::Tensor& b) -> Verdict { return b.dim() == 1; },
                [](const at::Tensor& a, const at::Tensor&) { return at::zeros_like(a); },
                {{"f32[3] * f32[4]", {at::ones({3}, f32), at::ones({4}, f32)}, "must match the size of tensor b"}});
  const Mismatch* m = nullptr;
  for (const SampleResult& r : results) {
    if (r.sample_class == "error" && !r.mismatches.empty()) m = &r.mismatches.front();
  }
  ASSERT_NE(m, nullptr) << all_messages(results);
  EXPECT_NE(m->message.find("accepted an invalid call"), std::string::npos) << m->message;
}

// native_layer_norm_backward leaves the gradients its output_mask does not ask for
// undefined: the sweep compares which outputs are defined, then the defined ones.
using LayerNormBackward = at::_ops::native_layer_norm_backward;
std::vector<SampleResult> sweep_layer_norm_backward(TypedImpl<LayerNormBackward> impl) {
  testing::register_test_dsls();
  const std::string node = register_op_override<LayerNormBackward>(
      "alpha", c10::DispatchKey::CPU,
      [](const at::Tensor&, const at::Tensor&, c10::SymIntArrayRef, const at::Tensor&, const at::Tensor&,
         const std::optional<at::Tensor>&, const std::optional<at::Tensor>&,
         std::array<bool, 3>) -> Verdict { return true; },
      impl);
  return sweep("native_layer_norm_backward", node, [node] {
    const at::Tensor input = make({6, 5}, 1);
    const at::Tensor weight = make({5}, 2);
    const at::Tensor bias = make({5}, 3);
    const auto [output, mean, rstd] = at::native_layer_norm(input, {5}, weight, bias, 1e-5);
    torch::jit::Stack arguments{make({6, 5}, 4),
                                input,
                                std::vector<int64_t>{5},
                                mean,
                                rstd,
                                weight,
                                bias,
                                c10::List<bool>({true, false, true})};
    return std::vector<Sample>{{"f32[6,5], no weight gradient", SampleClass::typical, arguments, {node}}};
  });
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> correct_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, c10::SymIntArrayRef shape, const at::Tensor& mean,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    std::array<bool, 3> mask) {
  return call_original<LayerNormBackward>(grad_out, input, shape, mean, rstd, weight, bias, mask);
}

TEST(ConformanceCatches, NothingWhenAnOutputIsUndefinedAsTheReferencesIs) {
  const auto results = sweep_layer_norm_backward(&correct_layer_norm_backward);
  EXPECT_TRUE(failed_checks(results).empty()) << all_messages(results);
}

TEST(ConformanceCatches, AnOutputDefinedWhereTheReferencesIsNot) {
  const auto results = sweep_layer_norm_backward([](const at::Tensor& grad_out, const at::Tensor& input,
                                                    c10::SymIntArrayRef shape, const at::Tensor& mean,
                                                    const at::Tensor& rstd, const std::optional<at::Tensor>& weight,
                                                    const std::optional<at::Tensor>& bias, std::array<bool, 3>) {
    return correct_layer_norm_backward(grad_out, input, shape, mean, rstd, weight, bias, {true, true, true});
  });
  const Mismatch* m = find_mismatch(results, "count");
  ASSERT_NE(m, nullptr) << all_messages(results);
  EXPECT_NE(m->message.find("output 1 is defined where the reference's is not"), std::string::npos) << m->message;
}

// Which of equal elements topk returns, and the order of unsorted results, are aten's to
// choose: an override that picks other equal elements (the last ones: topk of the reversed
// row) passes where the entry makes outputs canonical, and only there; wrong values fail
// either way.
using TopkImpl = TypedImpl<at::_ops::topk>;

std::tuple<at::Tensor, at::Tensor> topk_from_the_end(const at::Tensor& self, c10::SymInt k, int64_t dim, bool largest,
                                                     bool sorted) {
  const auto [values, indices] = call_original<at::_ops::topk>(self.flip({-1}), std::move(k), dim, largest, sorted);
  return {values, (self.size(-1) - 1) - indices};
}

// topk's values sorted, and the elements its indices gather, sorted.
torch::jit::Stack topk_canonical(const torch::jit::Stack& arguments, const torch::jit::Stack& outputs) {
  const int64_t dim = arguments[2].toInt();
  const bool largest = arguments[3].toBool();
  auto sorted = [&](const at::Tensor& t) { return std::get<0>(t.sort(dim, largest)); };
  return {sorted(outputs[0].toTensor()), sorted(arguments[0].toTensor().gather(dim, outputs[1].toTensor()))};
}

std::vector<SampleResult> sweep_topk(TopkImpl impl, bool canonical) {
  testing::register_test_dsls();
  const std::string node = register_op_override<at::_ops::topk>(
      "alpha", c10::DispatchKey::CPU,
      [](const at::Tensor& self, const c10::SymInt&, int64_t dim, bool, bool) {
        return self.scalar_type() == at::kFloat && self.dim() == 2 && (dim == -1 || dim == 1);
      },
      std::move(impl));
  // Rows of a few distinct values: most of the k kept have equal ones left out.
  auto ties = [](uint64_t seed) { return at::floor(make({6, 20}, seed) / 4); };
  return sweep(
      "topk", node,
      [node, ties] {
        return std::vector<Sample>{
            {"f32[6,20] of few values, k 5, sorted",
             SampleClass::typical,
             {ties(11), int64_t{5}, int64_t{-1}, true, true},
             {node}},
            {"f32[6,20] of few values, k 7, smallest, unsorted",
             SampleClass::typical,
             {ties(12), int64_t{7}, int64_t{-1}, false, false},
             {node}},
        };
      },
      {},
      [canonical](OpEntry& entry) {
        entry.differentiable = false;  // the gradient lands where the indices point
        if (canonical) entry.canonical_outputs = topk_canonical;
      });
}

TEST(ConformanceCatches, NothingWhenTopkPicksOtherEqualElementsAndOutputsAreMadeCanonical) {
  const auto results = sweep_topk(&topk_from_the_end, /*canonical=*/true);
  EXPECT_TRUE(failed_checks(results).empty()) << all_messages(results);
  EXPECT_EQ(results.size(), 3u);  // two samples and the coverage result
}

TEST(ConformanceCatches, OtherEqualElementsWhereOutputsAreComparedAsTheyAre) {
  const auto results = sweep_topk(&topk_from_the_end, /*canonical=*/false);
  const Mismatch* m = find_mismatch(results, "values");
  ASSERT_NE(m, nullptr) << all_messages(results);
  EXPECT_NE(m->message.find("output 1"), std::string::npos) << m->message;  // the indices
}

TEST(ConformanceCatches, WrongTopkValuesWhereOutputsAreMadeCanonical) {
  const auto results = sweep_topk(
      [](const at::Tensor& self, c10::SymInt k, int64_t dim, bool largest, bool sorted) {
        auto [values, indices] = topk_from_the_end(self, std::move(k), dim, largest, sorted);
        values.select(1, 0).add_(1);
        return std::tuple<at::Tensor, at::Tensor>{values, indices};
      },
      /*canonical=*/true);
  const Mismatch* m = find_mismatch(results, "values");
  ASSERT_NE(m, nullptr) << all_messages(results);
  EXPECT_NE(m->message.find("output 0"), std::string::npos) << m->message;
}

// The comparisons take differences with sub: were they routed, an override of sub that
// returns zeros would find every difference zero and pass itself.
TEST(ConformanceCatches, WrongValuesOfAnOpTheComparisonItselfUses) {
  testing::register_test_dsls();
  const std::string node = register_op_override<at::_ops::sub_Tensor>(
      "alpha", c10::DispatchKey::CPU,
      [](const at::Tensor& a, const at::Tensor& b, const c10::Scalar&) {
        return a.is_floating_point() && a.scalar_type() == b.scalar_type() && a.sizes() == b.sizes()
                   ? Verdict(true)
                   : decline("not two floating tensors of one shape");
      },
      [](const at::Tensor& a, const at::Tensor&, const c10::Scalar&) { return at::zeros_like(a); });
  const auto results = sweep("sub.Tensor", node, [node] {
    return std::vector<Sample>{
        {"f32[8,5] - f32[8,5]", SampleClass::typical, {make({8, 5}, 31), make({8, 5}, 32), 1.0}, {node}},
        {"f32[3,7] - f32[3,7]", SampleClass::typical, {make({3, 7}, 33), make({3, 7}, 34), 1.0}, {node}},
    };
  });
  EXPECT_TRUE(failed_checks(results).count("values")) << all_messages(results);
  EXPECT_TRUE(failed_checks(results).count("float64")) << all_messages(results);
}

using MultinomialImpl = TypedImpl<at::_ops::multinomial>;

// A random op's samples, each with its own seeded generator: routed and original calls
// must draw alike.
std::vector<SampleResult> sweep_multinomial(MultinomialImpl impl) {
  testing::register_test_dsls();
  const std::string node = register_op_override<at::_ops::multinomial>(
      "alpha", c10::DispatchKey::CPU,
      [](const at::Tensor& self, c10::SymInt, bool, std::optional<at::Generator>) {
        return self.scalar_type() == at::kFloat ? Verdict(true) : decline("not float32");
      },
      impl);
  return sweep(
      "multinomial", node,
      [node] {
        return std::vector<Sample>{
            {"f32[16,50], 1 sample",
             SampleClass::typical,
             {make({16, 50}, 21).abs_(), int64_t{1}, false, at::detail::createCPUGenerator(7)},
             {node}},
            {"f32[4,300], 3 samples",
             SampleClass::typical,
             {make({4, 300}, 22).abs_(), int64_t{3}, false, at::detail::createCPUGenerator(8)},
             {node}},
        };
      },
      {},
      [](OpEntry& entry) {
        entry.differentiable = false;
        entry.upcast_reference = false;
      });
}

at::Tensor original_multinomial(const at::Tensor& self, c10::SymInt samples, bool replacement,
                                std::optional<at::Generator> generator) {
  return call_original<at::_ops::multinomial>(self, std::move(samples), replacement, std::move(generator));
}

TEST(ConformanceCatches, NothingWhenARandomOpDrawsAsTheOriginalFromTheSamplesGenerator) {
  const auto results = sweep_multinomial(&original_multinomial);
  EXPECT_TRUE(failed_checks(results).empty()) << all_messages(results);
  EXPECT_EQ(results.size(), 3u);  // two samples and the coverage result
}

TEST(ConformanceCatches, ARandomOpThatDrawsOtherNumbers) {
  const auto results = sweep_multinomial(
      [](const at::Tensor& self, c10::SymInt samples, bool replacement, std::optional<at::Generator> generator) {
        at::empty_like(self).exponential_(1, generator);  // one draw more than the original makes
        return original_multinomial(self, std::move(samples), replacement, std::move(generator));
      });
  ASSERT_NE(find_mismatch(results, "values"), nullptr) << all_messages(results);
}

}  // namespace
}  // namespace native_ops
