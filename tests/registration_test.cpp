// Registration: op symbols, node ids, and every refusal. A refused registration leaves
// the registry as it was.
#include <ATen/core/Tensor.h>
#include <ATen/ops/_fused_rms_norm_ops.h>

#include "support.h"

namespace native_ops {
namespace {

using c10::DispatchKey;
using testing::register_test_dsls;

BoxedCond always() {
  return [](const BoxedArgs&) { return true; };
}
BoxedImpl original() {
  return [](const c10::OperatorHandle& op, torch::jit::Stack& stack) { call_original_boxed(op, stack); };
}

void other_vendor_hypot(const c10::OperatorHandle&, torch::jit::Stack*) {}

std::string registration_error(const std::function<void()>& registration) {
  const size_t graphs_before = graphs().size();
  try {
    registration();
  } catch (const Error& e) {
    EXPECT_EQ(graphs().size(), graphs_before) << "a refused registration changed the registry";
    return e.what();
  }
  ADD_FAILURE() << "registration was not refused";
  return "";
}

TEST(Registration, OpSymbolNamesTheDefaultOrANamedOverload) {
  register_test_dsls();
  EXPECT_EQ(register_op_override("alpha", "aten", "neg", DispatchKey::CPU, always(), original()), "neg_alpha_0");
  EXPECT_EQ(register_op_override("alpha", "aten", "sub.Tensor", DispatchKey::CPU, always(), original()),
            "sub_Tensor_alpha_0");
  EXPECT_EQ(register_op_override("beta", "aten", "neg.default", DispatchKey::CPU, always(), original()), "neg_beta_0");
  const GraphInfo neg = testing::graph("neg");
  ASSERT_EQ(neg.nodes.size(), 2u) << "'neg' and 'neg.default' must name one graph";
  EXPECT_EQ(neg.nodes[0].id, "neg_alpha_0");
  EXPECT_EQ(neg.nodes[1].id, "neg_beta_0");
  EXPECT_EQ(testing::graph("sub.Tensor").op_symbol, "sub.Tensor");
}

TEST(Registration, MalformedOpSymbolsAreRefused) {
  register_test_dsls();
  for (const char* symbol : {"", ".neg", "neg.", "aten::neg", "ne g"}) {
    const std::string message = registration_error(
        [&] { register_op_override("alpha", "aten", symbol, DispatchKey::CPU, always(), original()); });
    EXPECT_NE(message.find("is not an op symbol"), std::string::npos) << symbol << ": " << message;
  }
}

TEST(Registration, NodeIdsCountPerOpAndDslAcrossKeys) {
  register_test_dsls();
  Options multiple;
  multiple.allow_multiple_override = true;
  EXPECT_EQ(register_op_override("alpha", "aten", "sub.Tensor", DispatchKey::CPU, always(), original()),
            "sub_Tensor_alpha_0");
  EXPECT_EQ(register_op_override("alpha", "aten", "sub.Tensor", DispatchKey::CPU, always(), original(), multiple),
            "sub_Tensor_alpha_1");
  EXPECT_EQ(register_op_override("alpha", "aten", "sub.Tensor", DispatchKey::CUDA, always(), original()),
            "sub_Tensor_alpha_2");
}

TEST(Registration, MetaCompositeAndNonBackendKeysAreRefused) {
  register_test_dsls();
  for (DispatchKey key :
       {DispatchKey::Meta, DispatchKey::CompositeImplicitAutograd, DispatchKey::CompositeExplicitAutograd,
        DispatchKey::CompositeExplicitAutogradNonFunctional, DispatchKey::AutogradCPU, DispatchKey::BackendSelect}) {
    const std::string message =
        registration_error([&] { register_op_override("alpha", "aten", "neg", key, always(), original()); });
    EXPECT_NE(message.find(c10::toString(key)), std::string::npos) << message;
    EXPECT_NE(message.find("CPU or CUDA"), std::string::npos) << "no fix given: " << message;
  }
}

TEST(Registration, CompositeImplicitAutogradOpsAreRefused) {
  register_test_dsls();
  const std::string message = registration_error(
      [] { register_op_override("alpha", "aten", "matmul", DispatchKey::CPU, always(), original()); });
  EXPECT_NE(message.find("aten::matmul is CompositeImplicitAutograd at CPU"), std::string::npos) << message;
}

TEST(Registration, CompositeImplicitAutogradOpsWithABackendKernelAreTakenThere) {
  register_test_dsls();
  // _fused_rms_norm decomposes everywhere but has a CUDA kernel of its own (under an
  // autograd kernel): overridable at CUDA, not at CPU.
  const std::string message = registration_error(
      [] { register_op_override("alpha", "aten", "_fused_rms_norm", DispatchKey::CPU, always(), original()); });
  EXPECT_NE(message.find("is CompositeImplicitAutograd at CPU"), std::string::npos) << message;
  const auto op = c10::Dispatcher::singleton().findSchema({"aten::_fused_rms_norm", ""});
  ASSERT_TRUE(op.has_value());
  if (!op->hasKernelForDispatchKey(DispatchKey::CUDA)) GTEST_SKIP() << "this libtorch has no CUDA kernels";
  // Typed, like the built-in cuda override already there.
  EXPECT_EQ(register_op_override<at::_ops::_fused_rms_norm>(
                "alpha", DispatchKey::CUDA,
                [](const at::Tensor&, at::IntArrayRef, const std::optional<at::Tensor>&, std::optional<double>) {
                  return true;
                },
                &at::_ops::_fused_rms_norm::call),
            "_fused_rms_norm_alpha_0");
}

TEST(Registration, CondIsRequiredUnlessUnconditional) {
  register_test_dsls();
  std::string message =
      registration_error([] { register_op_override("alpha", "aten", "neg", DispatchKey::CPU, nullptr, original()); });
  EXPECT_NE(message.find("unconditional_override"), std::string::npos) << message;

  Options unconditional;
  unconditional.unconditional_override = true;
  message = registration_error(
      [&] { register_op_override("alpha", "aten", "neg", DispatchKey::CPU, always(), original(), unconditional); });
  EXPECT_NE(message.find("takes no cond"), std::string::npos) << message;

  EXPECT_EQ(register_op_override("alpha", "aten", "neg", DispatchKey::CPU, nullptr, original(), unconditional),
            "neg_alpha_0");
  EXPECT_TRUE(testing::graph("neg").nodes[0].unconditional);
}

TEST(Registration, UnknownOpsAreRefusedWithCloseNames) {
  register_test_dsls();
  std::string message =
      registration_error([] { register_op_override("alpha", "aten", "bmmm", DispatchKey::CPU, always(), original()); });
  EXPECT_NE(message.find("unknown op aten::bmmm"), std::string::npos) << message;
  EXPECT_NE(message.find("Did you mean: bmm"), std::string::npos) << message;

  message = registration_error(
      [] { register_op_override("alpha", "aten", "add_.Tensr", DispatchKey::CPU, always(), original()); });
  EXPECT_NE(message.find("add_.Tensor"), std::string::npos) << message;
}

TEST(Registration, AnOpFromALaterLibtorchIsUnavailableNotAnError) {
  register_test_dsls();
  Options later;
  later.since_torch = "99.0";
  const std::string id =
      register_op_override("alpha", "aten", "_op_of_a_later_release", DispatchKey::CPU, always(), original(), later);
  const auto node = find_node(id);
  ASSERT_TRUE(node);
  EXPECT_EQ(node->state, NodeState::unavailable);
  EXPECT_NE(node->reason.find("is not in libtorch 2.11"), std::string::npos) << node->reason;
  init();  // skips it quietly
  EXPECT_FALSE(testing::graph("_op_of_a_later_release").router_installed);

  // On a libtorch that should have it, a missing op is a typo, not a version gap.
  Options earlier;
  earlier.since_torch = "2.0";
  const std::string message = registration_error([&] {
    register_op_override("alpha", "aten", "_op_of_an_earlier_release", DispatchKey::CPU, always(), original(), earlier);
  });
  EXPECT_NE(message.find("unknown op"), std::string::npos) << message;
}

TEST(Registration, UnknownDslsAndNamespacesAreRefused) {
  register_test_dsls();
  std::string message =
      registration_error([] { register_op_override("alphaa", "aten", "neg", DispatchKey::CPU, always(), original()); });
  EXPECT_NE(message.find("unknown dsl 'alphaa'"), std::string::npos) << message;
  EXPECT_NE(message.find("Did you mean: alpha"), std::string::npos) << message;

  message =
      registration_error([] { register_op_override("alpha", "prims", "neg", DispatchKey::CPU, always(), original()); });
  EXPECT_NE(message.find("namespace 'prims'"), std::string::npos) << message;
}

TEST(Registration, ANodeOfAnUnavailableDslIsListedWithTheFix) {
  register_test_dsls();
  const std::string id = register_op_override("ghost", "aten", "neg", DispatchKey::CPU, always(), original());
  const auto node = find_node(id);
  ASSERT_TRUE(node);
  EXPECT_EQ(node->state, NodeState::unavailable);
  EXPECT_NE(node->reason.find("install ghost-runtime"), std::string::npos) << node->reason;
  init();
  EXPECT_FALSE(testing::graph("neg").router_installed) << "an unavailable node must not be installed";
}

TEST(Registration, ASecondOverrideBySameDslNeedsAllowMultiple) {
  register_test_dsls();
  register_op_override("alpha", "aten", "neg", DispatchKey::CPU, always(), original());
  const std::string message =
      registration_error([] { register_op_override("alpha", "aten", "neg", DispatchKey::CPU, always(), original()); });
  EXPECT_NE(message.find("allow_multiple_override"), std::string::npos) << message;
  EXPECT_EQ(testing::graph("neg").nodes.size(), 1u);
}

TEST(Registration, AGraphIsTypedOrBoxedForGood) {
  register_test_dsls();
  register_op_override<at::_ops::mul_Tensor>(
      "alpha", DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) { return false; },
      [](const at::Tensor& a, const at::Tensor& b) { return call_original<at::_ops::mul_Tensor>(a, b); });
  const std::string message = registration_error(
      [] { register_op_override("beta", "aten", "mul.Tensor", DispatchKey::CPU, always(), original()); });
  EXPECT_NE(message.find("already has typed overrides"), std::string::npos) << message;
  EXPECT_TRUE(testing::graph("mul.Tensor").typed);
}

TEST(Registration, DispatchKeyNamesAreParsedWithSuggestions) {
  EXPECT_EQ(parse_dispatch_key("CPU"), DispatchKey::CPU);
  EXPECT_EQ(parse_dispatch_key("CUDA"), DispatchKey::CUDA);
  try {
    parse_dispatch_key("CUDAA");
    ADD_FAILURE() << "CUDAA accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Did you mean: CUDA"), std::string::npos) << e.what();
  }
}

TEST(Registration, BuiltinsAreRegisteredFirstAndInstalledByInit) {
  const GraphInfo bmm = testing::graph("bmm");
  ASSERT_FALSE(bmm.nodes.empty());
  EXPECT_EQ(bmm.nodes[0].id, "bmm_cpp_0");
  EXPECT_TRUE(bmm.typed);
  EXPECT_FALSE(bmm.router_installed) << "nothing is installed before init()";
  init();
  for (const char* op : {"bmm", "_softmax", "add_.Tensor"}) {
    EXPECT_TRUE(testing::graph(op).router_installed) << op;
  }
  init();  // a second call changes nothing
  EXPECT_TRUE(is_initialized());
}

TEST(Registration, AnotherLibrarysKernelAtTheSameKeyIsListedAsAnOverlap) {
  register_test_dsls();
  register_op_override("alpha", "aten", "hypot", DispatchKey::CPU, always(), original());
  EXPECT_TRUE(testing::graph("hypot").overlaps.empty()) << "libtorch's own kernel is no overlap";
  init();
  EXPECT_TRUE(testing::graph("hypot").overlaps.empty()) << "native-ops' own router is no overlap";
  // Another library overrides the same (op, key), as a second kernel pack would.
  torch::Library other(torch::Library::IMPL, "aten", DispatchKey::CPU, "other_vendor.cpp", 7);
  other.impl("hypot", torch::CppFunction::makeFromBoxedFunction<&other_vendor_hypot>());
  const std::vector<std::string> overlaps = testing::graph("hypot").overlaps;
  ASSERT_EQ(overlaps.size(), 1u);
  EXPECT_EQ(overlaps[0], "registered at other_vendor.cpp:7");
}

}  // namespace
}  // namespace native_ops
