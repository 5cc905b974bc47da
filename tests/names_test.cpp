// Every tool reports an unknown DSL, and an unknown node id, in the same words (names.h).
#include <functional>
#include <string>

#include <ATen/core/Tensor.h>
#include <gtest/gtest.h>

#include "native_ops/native_ops.h"
#include "native_ops/testing/conformance.h"
#include "support.h"

using namespace native_ops;

namespace {

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(Names, ExcerptsAreShortAndEscaped) {
  EXPECT_EQ(excerpt("bmm"), "bmm");
  EXPECT_EQ(excerpt(std::string("a\0b\n", 4)), "a\\x00b\\x0a");
  EXPECT_EQ(excerpt(std::string(100, 'x')), std::string(64, 'x') + "... (100 bytes)");
  EXPECT_TRUE(closest(std::string(kMaxSuggestedName + 1, 'c'), {"cpp"}).empty()) << "no search for a huge name";
  EXPECT_EQ(closest("cppp", {"cpp", "cuda"}), (std::vector<std::string>{"cpp"}));
}

TEST(Names, AnUnknownDslGetsOneWordingEverywhere) {
  const std::string expected = "unknown dsl 'tritn'. Did you mean: triton? `native-ops dsls` lists the DSLs";
  EXPECT_EQ(unknown_dsl_message("tritn"), expected);
  EXPECT_EQ(error_of([] { require_dsl("tritn"); }), expected);
  EXPECT_EQ(&require_dsl("cpp"), find_dsl("cpp"));
  EXPECT_EQ(error_of([] {
              register_op_override<at::_ops::relu>(
                  "tritn", c10::DispatchKey::CPU, [](const at::Tensor&) { return true; },
                  [](const at::Tensor& x) { return x; });
            }),
            expected);
  EXPECT_EQ(error_of([] {
              SweepOptions options;
              options.dsl = "tritn";
              plan_sweep(options);
            }),
            expected);
  EXPECT_NE(error_of([] { plan_policy(parse_policy(R"({"version": 1, "keep_dsls": ["tritn"]})")); }).find(expected),
            std::string::npos);
}

TEST(Names, AnUnknownNodeIdGetsOneWordingEverywhere) {
  const std::string expected =
      "unknown node id 'bmm_cpp_1'. Did you mean: bmm_cpp_0, mm_cpp_0? `native-ops list` lists the node ids";
  EXPECT_EQ(error_of([] { require_node("bmm_cpp_1"); }), expected);
  EXPECT_EQ(require_node("bmm_cpp_0").dsl, "cpp");
  EXPECT_EQ(error_of([] { find_node_handle("bmm_cpp_1"); }), expected);
  EXPECT_EQ(error_of([] { on_error_of("bmm_cpp_1"); }), expected);
  EXPECT_NE(error_of([] {
              plan_policy(parse_policy(R"({"version": 1, "disable": [{"node": "bmm_cpp_1"}]})"));
            }).find(expected),
            std::string::npos);
}
