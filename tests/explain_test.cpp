// explain(): what every cond makes of a call described in the argument-spec language,
// with the reasons conds give; the spec parser itself.
#include <ATen/Context.h>
#include <ATen/core/Tensor.h>

#include "native_ops/testing/arg_spec.h"
#include "support.h"

namespace native_ops {
namespace {

using c10::DispatchKey;

using testing::error_of;

TEST(ArgSpec, ParsesTensorsScalarsListsAndNone) {
  const torch::jit::Stack args = parse_arg_spec("f32[8,128,1], bf16[4,4]{1,4}@cpu, -1, 2.5, true, none, [0, 1], i64[]");
  ASSERT_EQ(args.size(), 8u);
  EXPECT_EQ(args[0].toTensor().sizes(), at::IntArrayRef({8, 128, 1}));
  EXPECT_TRUE(args[0].toTensor().is_contiguous());
  EXPECT_EQ(args[0].toTensor().scalar_type(), at::kFloat);
  EXPECT_EQ(args[1].toTensor().strides(), at::IntArrayRef({1, 4}));
  EXPECT_FALSE(args[1].toTensor().is_contiguous());
  EXPECT_EQ(args[1].toTensor().scalar_type(), at::kBFloat16);
  EXPECT_EQ(args[2].toInt(), -1);
  EXPECT_DOUBLE_EQ(args[3].toDouble(), 2.5);
  EXPECT_TRUE(args[4].toBool());
  EXPECT_TRUE(args[5].isNone());
  EXPECT_EQ(args[6].toIntVector(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(args[7].toTensor().dim(), 0);
  EXPECT_TRUE(parse_arg_spec("  ").empty());
  const torch::jit::Stack with_dtype = parse_arg_spec("bf16[2,3], bf16 , f32");
  ASSERT_EQ(with_dtype.size(), 3u);
  EXPECT_EQ(with_dtype[1].toScalarType(), at::kBFloat16);
  EXPECT_EQ(with_dtype[2].toScalarType(), at::kFloat);
}

TEST(ArgSpec, ErrorsNameTheColumnAndWhatWasExpected) {
  EXPECT_NE(error_of([] { parse_arg_spec("f33[2]"); }).find("column 1: expected a dtype"), std::string::npos);
  EXPECT_NE(error_of([] { parse_arg_spec("f32[2,]"); }).find("column 7: expected a number"), std::string::npos);
  EXPECT_NE(error_of([] { parse_arg_spec("f32[2,3]{1}"); }).find("as many strides as sizes"), std::string::npos);
  EXPECT_NE(error_of([] { parse_arg_spec("f32[2] f32[2]"); }).find("expected ',' between arguments"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_arg_spec("f32[2]@gpu"); }).find("a device such as cpu, cuda"), std::string::npos);
  const std::string negative = error_of([] { parse_arg_spec("f32[2,2,2]{4,-2,1}"); });
  EXPECT_NE(negative.find("column 11: expected strides of 0 or more"), std::string::npos) << negative;
  EXPECT_EQ(negative.find("device"), std::string::npos) << "no device hint for a CPU tensor: " << negative;
}

// Found by fuzzing (tests/fuzz/regressions/arg_spec/): sizes that need gigabytes, or whose
// strides overflow, are refused before anything is allocated.
TEST(ArgSpec, RefusesTensorsTooLargeToMakeBeforeAllocating) {
  EXPECT_NE(error_of([] { parse_arg_spec("f32[8,128,9], f32[8,18,1,88,256,256]"); }).find("over 1 GiB in all"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_arg_spec("f32[9223372036854775807,4]"); }).find("over 1 GiB"), std::string::npos);
  EXPECT_NE(error_of([] { parse_arg_spec("f32[2,2]{9223372036854775807,1}"); }).find("over 1 GiB"), std::string::npos);
  EXPECT_NE(error_of([] { parse_arg_spec("f32[-1]"); }).find("negative sizes"), std::string::npos);
  EXPECT_EQ(parse_arg_spec("f32[0,9223372036854775807]")[0].toTensor().numel(), 0);  // empty: no storage
  EXPECT_EQ(parse_arg_spec("f32[1024,1024]")[0].toTensor().numel(), 1 << 20);
}

TEST(Explain, TheBuiltinBmmFiresOnAnOuterProductAndSaysWhyItDeclines) {
  init();
  Explanation hit = explain("bmm", DispatchKey::CPU, parse_arg_spec("f32[8,128,1], f32[8,1,256]"));
  EXPECT_TRUE(hit.router_installed);
  ASSERT_EQ(hit.checks.size(), 1u);
  EXPECT_TRUE(hit.checks[0].evaluated);
  EXPECT_TRUE(hit.checks[0].accepted);
  EXPECT_TRUE(hit.checks[0].fires);
  EXPECT_EQ(hit.fires, "bmm_cpp_0");
  EXPECT_EQ(testing::hits("bmm_cpp_0"), 0u) << "explain must not run impls";

  Explanation miss = explain("bmm", DispatchKey::CPU, parse_arg_spec("f32[8,128,2], f32[8,2,256]"));
  EXPECT_FALSE(miss.checks[0].accepted);
  EXPECT_EQ(miss.checks[0].reason, "inner dimension is not 1");
  EXPECT_FALSE(miss.fires.has_value()) << "aten runs";

  Explanation strided = explain("bmm", DispatchKey::CPU, parse_arg_spec("f32[2,3,1], f32[2,1,4]{4,4,2}"));
  EXPECT_EQ(strided.checks[0].reason, "mat2's rows are not unit-stride");
}

TEST(Explain, MissingArgumentsTakeTheSchemasDefaults) {
  init();
  // add_.Tensor(Tensor self, Tensor other, *, Scalar alpha=1): alpha comes from the schema.
  const Explanation add = explain("add_.Tensor", DispatchKey::CPU, parse_arg_spec("f32[16], f32[16]"));
  EXPECT_EQ(add.fires, "add__Tensor_cpp_0");
  EXPECT_NE(add.schema.find("Scalar alpha=1"), std::string::npos) << add.schema;
  const Explanation softmax = explain("_softmax", DispatchKey::CPU, parse_arg_spec("f32[64,64], -1, false"));
  EXPECT_EQ(softmax.checks[0].reason, "fewer than 65536 elements: aten is as fast");
}

TEST(Explain, EveryNodeInOrderWithReasonsAndStates) {
  testing::register_test_dsls();
  register_op_override<at::_ops::mul_Tensor>(
      "alpha", DispatchKey::CPU,
      [](const at::Tensor& a, const at::Tensor&) -> Verdict {
        if (a.scalar_type() != at::kDouble) return decline("alpha wants float64");
        return true;
      },
      [](const at::Tensor& a, const at::Tensor& b) { return call_original<at::_ops::mul_Tensor>(a, b); });
  register_op_override<at::_ops::mul_Tensor>(
      "beta", DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) { return true; },
      [](const at::Tensor& a, const at::Tensor& b) { return call_original<at::_ops::mul_Tensor>(a, b); });
  register_op_override<at::_ops::mul_Tensor>(
      "ghost", DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) { return true; },
      [](const at::Tensor& a, const at::Tensor& b) { return call_original<at::_ops::mul_Tensor>(a, b); });
  init();
  const Explanation e = explain("mul.Tensor", DispatchKey::CPU, parse_arg_spec("f32[4], f32[4]"));
  ASSERT_EQ(e.checks.size(), 3u);
  EXPECT_EQ(e.checks[0].reason, "alpha wants float64");
  EXPECT_TRUE(e.checks[1].accepted);
  EXPECT_TRUE(e.checks[1].fires);
  EXPECT_FALSE(e.checks[2].evaluated);
  EXPECT_NE(e.checks[2].reason.find("install ghost-runtime"), std::string::npos) << e.checks[2].reason;
  EXPECT_EQ(e.fires, "mul_Tensor_beta_0");
  EXPECT_EQ(e.checks[0].node.origin, "program");
  EXPECT_EQ(find_node("bmm_cpp_0")->origin, "built-in");

  deregister_overrides({"beta", "", std::nullopt});
  const Explanation off = explain("mul.Tensor", DispatchKey::CPU, parse_arg_spec("f64[4], f64[4]"));
  EXPECT_EQ(off.fires, "mul_Tensor_alpha_0");
  EXPECT_FALSE(off.checks[1].evaluated);
  EXPECT_NE(off.checks[1].reason.find("deregister_overrides(dsl=beta)"), std::string::npos);
}

TEST(Explain, AnOpWithoutOverridesRunsAten) {
  init();
  const Explanation e = explain("sin", DispatchKey::CPU, parse_arg_spec("f32[4]"));
  EXPECT_TRUE(e.checks.empty());
  EXPECT_FALSE(e.fires.has_value());
}

TEST(Explain, UnknownOpsAndBadArgumentsAreErrors) {
  EXPECT_NE(error_of([] {
              explain("bmmm", DispatchKey::CPU, parse_arg_spec("f32[1,1,1], f32[1,1,1]"));
            }).find("Did you mean: bmm"),
            std::string::npos);
  const std::string message = error_of([] { explain("bmm", DispatchKey::CPU, parse_arg_spec("f32[1,1,1]")); });
  EXPECT_NE(message.find("missing value for argument 'mat2'"), std::string::npos) << message;
  EXPECT_NE(error_of([] {
              explain("bmm", DispatchKey::CPU, parse_arg_spec("f32[1,1,1], 3"));
            }).find("the arguments do not fit aten::bmm"),
            std::string::npos);
}

TEST(Explain, TheKeyComesFromTheFirstTensor) {
  EXPECT_EQ(dispatch_key_of(parse_arg_spec("2, f32[3]")), DispatchKey::CPU);
  EXPECT_EQ(dispatch_key_of(parse_arg_spec("2")), DispatchKey::CPU);
  if (at::globalContext().hasCUDA()) {
    EXPECT_EQ(dispatch_key_of(parse_arg_spec("f32[3]@cuda")), DispatchKey::CUDA);
  }
}

}  // namespace
}  // namespace native_ops
