// Fault containment (faults.h): an override whose kernel cannot run (its impl throws
// KernelUnavailable) falls back to aten and is switched off, or, strict, raises; the
// settings by node, DSL and "*", from the API, policies and NATIVE_OPS_ON_ERROR; other
// impl errors always raise; sweeps run strict. Each TEST runs in its own process.
#include <cstdlib>
#include <functional>

#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/full.h>
#include <ATen/ops/neg.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/sub.h>

#include "native_ops/dsl.h"
#include "native_ops/faults.h"
#include "native_ops/policy.h"
#include "native_ops/testing/conformance.h"
#include "support.h"

namespace native_ops {
namespace {

using c10::DispatchKey;
using testing::fallthroughs;
using testing::hits;
using testing::identical;

// A neg override whose kernel "cannot run", counting how often its impl is entered.
int impl_calls = 0;
std::string register_broken_neg() {
  testing::register_test_dsls();
  impl_calls = 0;
  return register_op_override<at::_ops::neg>(
      "alpha", DispatchKey::CPU, [](const at::Tensor&) { return true; },
      [](const at::Tensor&) -> at::Tensor {
        ++impl_calls;
        throw KernelUnavailable("the neg kernel's artifact is missing: rebuild");
      });
}

// Runs a call a strict node's failure must reach: the error names the failure and the node,
// and the node stays on.
void expect_strict_failure(const std::function<void()>& call, const std::string& failure, const std::string& id) {
  try {
    call();
    ADD_FAILURE() << "strict: the failure must reach the caller";
  } catch (const std::exception& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(failure), std::string::npos) << message;
    EXPECT_NE(message.find(id), std::string::npos) << message;
  }
  EXPECT_EQ(find_node(id)->state, NodeState::active) << "strict leaves the node on";
}

TEST(Faults, FallbackRunsAtenSwitchesTheNodeOffAndWarnsOnce) {
  const std::string id = register_broken_neg();
  init();
  ASSERT_EQ(on_error_of(id), OnError::fallback);  // the default
  const at::Tensor x = at::rand({8});
  EXPECT_TRUE(identical(at::neg(x), x * -1));
  EXPECT_EQ(impl_calls, 1);
  EXPECT_EQ(hits(id), 0u) << "the call ran aten: a fall-through";
  EXPECT_EQ(fallthroughs("neg"), 1u);
  const std::optional<NodeInfo> node = find_node(id);
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->state, NodeState::unavailable);
  EXPECT_NE(node->reason.find("its kernel failed, so aten runs instead: the neg kernel's artifact is missing"),
            std::string::npos)
      << node->reason;
  EXPECT_TRUE(identical(at::neg(x), x * -1));
  EXPECT_EQ(impl_calls, 1) << "a switched-off node is not tried again";
  EXPECT_EQ(fallthroughs("neg"), 2u);
}

TEST(Faults, StrictRaisesNamingTheNode) {
  const std::string id = register_broken_neg();
  init();
  set_on_error(id, OnError::strict);
  expect_strict_failure([] { at::neg(at::rand({8})); }, "artifact is missing", id);
}

TEST(Faults, BoxedOverridesFallBackWithTheirArgumentsIntact) {
  testing::register_test_dsls();
  const std::string id = register_op_override(
      "alpha", "aten", "add.Tensor", DispatchKey::CPU, [](const BoxedArgs&) { return true; },
      [](const c10::OperatorHandle&, torch::jit::Stack& stack) {
        torch::jit::drop(stack, 3);  // the impl consumed its arguments before failing
        throw KernelUnavailable("no driver");
      });
  init();
  const at::Tensor a = at::rand({5}), b = at::rand({5});
  EXPECT_TRUE(identical(at::add(a, b, 2), a + b * 2));
  EXPECT_EQ(find_node(id)->state, NodeState::unavailable);
}

// A strict boxed node keeps no copy of the arguments for a fallback it never takes.
TEST(Faults, StrictBoxedOverridesRaiseNamingTheNode) {
  testing::register_test_dsls();
  const std::string id = register_op_override(
      "alpha", "aten", "add.Tensor", DispatchKey::CPU, [](const BoxedArgs&) { return true; },
      [](const c10::OperatorHandle&, torch::jit::Stack& stack) {
        torch::jit::drop(stack, 3);
        throw KernelUnavailable("no driver");
      });
  init();
  set_on_error(id, OnError::strict);
  expect_strict_failure([] { at::add(at::rand({5}), at::rand({5}), 2); }, "no driver", id);
  set_on_error(id, OnError::fallback);  // and switched back, the arguments are kept again
  const at::Tensor a = at::rand({5}), b = at::rand({5});
  EXPECT_TRUE(identical(at::add(a, b, 2), a + b * 2));
  EXPECT_EQ(find_node(id)->state, NodeState::unavailable);
}

// How many references the impl finds on the first argument: the caller's, the stack's,
// and one more when the router keeps a copy of the arguments for a fallback.
// `op` is add.Tensor or sub.Tensor: (self, other, alpha).
long first_argument_references(const std::string& dsl, const std::string& op) {
  testing::register_test_dsls();
  if (!find_dsl(dsl)) register_dsl(make_compiled_in_dsl(dsl, "1"));
  static long references = 0;
  register_op_override(
      dsl, "aten", op, DispatchKey::CPU, [](const BoxedArgs&) { return true; },
      [](const c10::OperatorHandle& original, torch::jit::Stack& stack) {
        references = stack[stack.size() - 3].toTensor().use_count();
        call_original_boxed(original, stack);
      });
  init();
  const at::Tensor a = at::rand({5}), b = at::rand({5});
  EXPECT_TRUE(
      identical(op == "add.Tensor" ? at::add(a, b, 2) : at::sub(a, b, 2), op == "add.Tensor" ? a + b * 2 : a - b * 2));
  return references;
}

// A DSL whose kernels are linked in has nothing to fail to load: its boxed hits copy no
// arguments (the copy costs about 190 instructions per call: docs/PERFORMANCE.md).
TEST(Faults, ABoxedHitOfALinkedInDslKeepsNoCopyOfTheArguments) {
  const long linked_in = first_argument_references("linked_in", "add.Tensor");
  const long loaded = first_argument_references("alpha", "sub.Tensor");
  EXPECT_EQ(loaded, linked_in + 1) << "a node whose kernels load at run time keeps a copy for its fallback";
}

TEST(Faults, ALinkedInDslsKernelUnavailableReachesTheCallerAndTheNodeStaysOn) {
  register_dsl(make_compiled_in_dsl("linked_in", "1"));
  const std::string id = register_op_override<at::_ops::neg>(
      "linked_in", DispatchKey::CPU, [](const at::Tensor&) { return true; },
      [](const at::Tensor&) -> at::Tensor { throw KernelUnavailable("a vendor library is missing"); });
  init();
  expect_strict_failure([] { at::neg(at::rand({3})); }, "a vendor library is missing", id);
}

TEST(Faults, OtherImplErrorsAlwaysReachTheCaller) {
  testing::register_test_dsls();
  const std::string id = register_op_override<at::_ops::neg>(
      "alpha", DispatchKey::CPU, [](const at::Tensor&) { return true; },
      [](const at::Tensor&) -> at::Tensor { throw Error("a bad input, not a kernel that cannot run"); });
  init();
  EXPECT_THROW(at::neg(at::rand({3})), std::exception);
  EXPECT_EQ(find_node(id)->state, NodeState::active);
}

TEST(Faults, ANodeBeatsItsDslWhichBeatsStar) {
  const std::string id = register_broken_neg();
  set_on_error("*", OnError::strict);
  EXPECT_EQ(on_error_of(id), OnError::strict);
  set_on_error("alpha", OnError::fallback);
  EXPECT_EQ(on_error_of(id), OnError::fallback);
  set_on_error(id, OnError::strict);
  EXPECT_EQ(on_error_of(id), OnError::strict);
  clear_on_error();
  EXPECT_EQ(on_error_of(id), OnError::fallback);
  try {
    set_on_error("alpah", OnError::strict);
    FAIL() << "unknown target";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Did you mean: alpha"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_on_error("raise"), Error);
}

TEST(Faults, APolicySetsThem) {
  const std::string id = register_broken_neg();
  apply_policy(parse_policy(R"({"version": 1, "on_error": {"alpha": "strict"}})"));
  EXPECT_EQ(on_error_of(id), OnError::strict);
  try {
    parse_policy(R"({"version": 1, "on_error": {"alpha": "raise"}})");
    FAIL() << "raise is not an action";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected \"strict\" or \"fallback\""), std::string::npos) << e.what();
  }
}

TEST(Faults, TheEnvironmentSetsThemAtInit) {
  const std::string id = register_broken_neg();
  setenv("NATIVE_OPS_ON_ERROR", "fallback,alpha=strict", 1);
  init();
  EXPECT_EQ(on_error_of(id), OnError::strict);
}

TEST(Faults, AnEmptyEnvironmentValueIsUnset) {
  const std::string id = register_broken_neg();
  setenv("NATIVE_OPS_ON_ERROR", "", 1);
  init();
  EXPECT_TRUE(is_initialized());
  EXPECT_EQ(on_error_of(id), OnError::fallback);
}

TEST(Faults, ABadEnvironmentValueIsAnErrorAndInstallsNothing) {
  register_broken_neg();
  setenv("NATIVE_OPS_ON_ERROR", "alpha=retry", 1);
  try {
    init();
    FAIL() << "a bad value";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("NATIVE_OPS_ON_ERROR='alpha=retry'"), std::string::npos) << message;
    EXPECT_NE(message.find("use fallback or strict"), std::string::npos) << message;
  }
  EXPECT_FALSE(is_initialized());
}

TEST(Faults, SweepsRunStrict) {
  register_broken_neg();
  init();
  {
    detail::StrictFailuresScope strict;  // what run_sweep and run_benchmarks hold
    EXPECT_THROW(at::neg(at::rand({4})), std::exception);
  }
  EXPECT_EQ(impl_calls, 1);
  EXPECT_TRUE(identical(at::neg(at::ones({2})), at::full({2}, -1.0)));  // outside: contained
}

}  // namespace
}  // namespace native_ops
