// Ordering policies: each rule, validation errors that leave the registry untouched,
// atomic application and reset, the example files, and the environment variables.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <ATen/core/Tensor.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/rand.h>
#include <nlohmann/json.hpp>

#include "native_ops/policy.h"
#include "native_ops/report.h"
#include "support.h"

namespace native_ops {
namespace {

using c10::DispatchKey;

// Three nodes on mul.Tensor (alpha, beta, and an unconditional ghost-free gamma-less set).
class Policies : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::register_test_dsls();
    for (const char* dsl : {"alpha", "beta"}) {
      register_op_override<at::_ops::mul_Tensor>(
          dsl, DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) { return true; },
          [](const at::Tensor& a, const at::Tensor& b) { return call_original<at::_ops::mul_Tensor>(a, b); });
    }
    init();
  }
  std::vector<std::string> active(const std::string& op) {
    std::vector<std::string> ids;
    for (const NodeInfo& node : testing::graph(op).nodes) {
      if (node.state == NodeState::active) ids.push_back(node.id);
    }
    return ids;
  }
  std::string error_of(const std::string& json) {
    const std::vector<GraphInfo> before = graphs();
    try {
      apply_policy(parse_policy(json, "test.json"));
    } catch (const Error& e) {
      const std::vector<GraphInfo> after = graphs();
      EXPECT_EQ(before.size(), after.size());
      for (size_t i = 0; i < before.size(); ++i) {
        for (size_t j = 0; j < before[i].nodes.size(); ++j) {
          EXPECT_EQ(before[i].nodes[j].id, after[i].nodes[j].id) << "a refused policy changed an order";
          EXPECT_EQ(before[i].nodes[j].state, after[i].nodes[j].state) << "a refused policy changed a state";
        }
      }
      return e.what();
    }
    ADD_FAILURE() << "policy accepted: " << json;
    return "";
  }
};

TEST_F(Policies, DisableByOpGlobDslKeyAndNode) {
  apply_policy(parse_policy(R"({"version": 1, "disable": [{"op": "mu*", "dsl": "alpha"}]})"));
  EXPECT_EQ(active("mul.Tensor"), (std::vector<std::string>{"mul_Tensor_beta_0"}));
  const auto dropped = find_node("mul_Tensor_alpha_0");
  EXPECT_EQ(dropped->state, NodeState::dropped);
  EXPECT_EQ(dropped->reason, "dropped by policy <text>: disable[0]");
  EXPECT_EQ(active("bmm"), (std::vector<std::string>{"bmm_cpp_0"}));

  const Policy second =
      parse_policy(R"({"version": 1, "disable": [{"node": "bmm_cpp_0"}, {"key": "CPU", "op": "add_"}]})");
  apply_policy(second);
  EXPECT_TRUE(active("bmm").empty());
  EXPECT_TRUE(active("add_.Tensor").empty());
  EXPECT_EQ(active("mul.Tensor").size(), 2u) << "a later policy starts from registration order again";
  EXPECT_TRUE(testing::graph("bmm").router_installed) << "by default, an emptied graph keeps its router";
  sync_routers();
  EXPECT_FALSE(testing::graph("bmm").router_installed) << "synced, an emptied graph loses its router";
}

TEST_F(Policies, KeepDslsAndDslPriorityAndExplicitOrder) {
  apply_policy(parse_policy(R"({"version": 1, "keep_dsls": ["beta", "cpp"]})"));
  EXPECT_EQ(active("mul.Tensor"), (std::vector<std::string>{"mul_Tensor_beta_0"}));
  EXPECT_EQ(find_node("mul_Tensor_alpha_0")->reason, "dropped by policy <text>: keep_dsls");

  apply_policy(parse_policy(R"({"version": 1, "dsl_priority": ["beta"]})"));
  EXPECT_EQ(active("mul.Tensor"), (std::vector<std::string>{"mul_Tensor_beta_0", "mul_Tensor_alpha_0"}));
  const at::Tensor x = at::rand({4});
  at::mul(x, x);
  EXPECT_EQ(testing::hits("mul_Tensor_beta_0"), 1u) << "the policy's order routes";

  apply_policy(parse_policy(
      R"({"version": 1, "dsl_priority": ["beta"], "order": {"mul*": ["mul_Tensor_alpha_0"], "mul.Tensor": ["beta"]}})"));
  EXPECT_EQ(active("mul.Tensor"), (std::vector<std::string>{"mul_Tensor_alpha_0", "mul_Tensor_beta_0"}))
      << "the first matching order entry decides";
}

TEST_F(Policies, ResetRestoresRegistrationOrder) {
  apply_policy(parse_policy(R"({"version": 1, "disable": [{"op": "*"}]})"), Apply::now);
  EXPECT_TRUE(active("mul.Tensor").empty());
  EXPECT_TRUE(active("bmm").empty());
  EXPECT_FALSE(testing::graph("bmm").router_installed);
  reset_order(Apply::now);
  EXPECT_EQ(active("mul.Tensor"), (std::vector<std::string>{"mul_Tensor_alpha_0", "mul_Tensor_beta_0"}));
  EXPECT_TRUE(testing::graph("bmm").router_installed);
}

TEST_F(Policies, ThePlanSaysBeforeAndAfterAndChangesNothing) {
  const PolicyPlan plan = plan_policy(parse_policy(R"({"version": 1, "dsl_priority": ["beta", "alpha"]})"));
  ASSERT_EQ(plan.changes.size(), 1u);
  EXPECT_EQ(plan.changes[0].graph, "aten::mul.Tensor @ CPU");
  EXPECT_EQ(plan.changes[0].before, (std::vector<std::string>{"mul_Tensor_alpha_0", "mul_Tensor_beta_0"}));
  EXPECT_EQ(plan.changes[0].after, (std::vector<std::string>{"mul_Tensor_beta_0", "mul_Tensor_alpha_0"}));
  EXPECT_EQ(active("mul.Tensor")[0], "mul_Tensor_alpha_0") << "planning applied the policy";
  const auto json = nlohmann::json::parse(policy_plan_json(plan, "p.json", false));
  EXPECT_EQ(json["changes"][0]["after"][0], "mul_Tensor_beta_0");
}

TEST_F(Policies, MalformedJsonIsReportedWithLineAndColumn) {
  const std::string message = error_of("{\n  \"version\": 1,\n  \"disable\": [\n}");
  EXPECT_NE(message.find("policy test.json:4:1: malformed JSON"), std::string::npos) << message;
}

// Found by fuzzing (tests/fuzz/regressions/policy/): nlohmann's out_of_range for a number
// that overflows a double escaped the parser and terminated the process.
TEST_F(Policies, ANumberTooLargeForADoubleIsAnError) {
  const std::string message = error_of("8888887e44888");
  EXPECT_NE(message.find("unreadable JSON"), std::string::npos) << message;
  EXPECT_NE(error_of(R"({"version": 1e999})").find("unreadable JSON"), std::string::npos);
}

TEST_F(Policies, WrongTypesUnknownKeysAndAMissingVersionAreErrors) {
  EXPECT_NE(
      error_of(R"({"version": 1, "disable": {"op": "bmm"}})").find("at /disable: expected an array, found object"),
      std::string::npos);
  EXPECT_NE(
      error_of(R"({"version": 1, "disable": [{"op": 3}]})").find("at /disable/0/op: expected a string, found number"),
      std::string::npos);
  std::string message = error_of(R"({"version": 1, "dsl_prio": ["cpp"]})");
  EXPECT_NE(message.find("unknown key \"dsl_prio\". Did you mean: dsl_priority?"), std::string::npos) << message;
  EXPECT_NE(error_of(R"({"version": 1, "disable": [{"dls": "cpp"}]})").find("Did you mean: dsl"), std::string::npos);
  EXPECT_NE(error_of(R"({"disable": []})").find("\"version\" is missing"), std::string::npos);
  EXPECT_NE(error_of(R"({"version": 3})").find("expected 1, or 2 for a policy with \"select\""), std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "on_error": {"cpp": "retry"}})").find("expected \"strict\" or \"fallback\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "disable": [{}]})").find("an empty selector"), std::string::npos);
}

TEST_F(Policies, UnknownOpsDslsAndNodeIdsAreErrorsWithSuggestions) {
  std::string message = error_of(R"({"version": 1, "disable": [{"op": "bmmm"}]})");
  EXPECT_NE(message.find("at /disable/0/op: unknown op bmmm. Did you mean: bmm"), std::string::npos) << message;
  message = error_of(R"({"version": 1, "keep_dsls": ["trition"]})");
  EXPECT_NE(message.find("unknown dsl 'trition'. Did you mean: triton"), std::string::npos) << message;
  message = error_of(R"({"version": 1, "disable": [{"node": "bmm_cpp_1"}]})");
  EXPECT_NE(message.find("unknown node id 'bmm_cpp_1'. Did you mean: bmm_cpp_0"), std::string::npos) << message;
  message = error_of(R"({"version": 1, "order": {"bmm": ["cpq"]}})");
  EXPECT_NE(message.find("neither a node id nor a dsl. Did you mean: cpp"), std::string::npos) << message;
  EXPECT_NE(error_of(R"({"version": 1, "dsl_priority": ["cpp", "cpp"]})").find("listed twice"), std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "disable": [{"key": "CPPU"}]})").find("unknown dispatch key 'CPPU'"),
            std::string::npos);
}

TEST_F(Policies, OrderRulesApplyInTheFilesOrder) {
  apply_policy(parse_policy(R"({"version": 1, "order": {"mul.Tensor": ["beta"], "mul*": ["mul_Tensor_alpha_0"]}})"));
  EXPECT_EQ(active("mul.Tensor"), (std::vector<std::string>{"mul_Tensor_beta_0", "mul_Tensor_alpha_0"}))
      << "the first rule in the file matches, not the first in sorted order";
}

TEST_F(Policies, DuplicateKeysAreErrors) {
  EXPECT_NE(error_of(R"({"version": 1, "version": 1})").find("the key \"version\" appears twice"), std::string::npos);
  EXPECT_NE(
      error_of(R"({"version": 1, "order": {"mul*": ["beta"], "mul*": ["alpha"]}})").find("\"mul*\" appears twice"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "disable": [{"dsl": "alpha", "dsl": "beta"}]})").find("appears twice"),
            std::string::npos);
}

TEST_F(Policies, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep = R"({"version": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_NE(error_of(deep).find("nests arrays and objects deeper than 64 levels"), std::string::npos);
  const std::string in_a_string = R"({"version": 1, "description": ")" + std::string(1000, '[') + R"("})";
  EXPECT_NO_THROW(parse_policy(in_a_string)) << "brackets inside a string nest nothing";
}

TEST_F(Policies, ErrorsQuoteAShortEscapedExcerptAndSkipSuggestionsForHugeNames) {
  const std::string huge(1 << 20, 'x');
  const std::string message = error_of(R"({"version": 1, "disable": [{"op": ")" + huge + R"("}]})");
  EXPECT_LT(message.size(), 400u) << message.substr(0, 400);
  EXPECT_NE(message.find("... (1048576 bytes)"), std::string::npos) << message.substr(0, 400);
  const std::string with_nul = error_of(R"({"version": 1, "keep_dsls": ["a\u0000b"]})");
  EXPECT_NE(with_nul.find("unknown dsl 'a\\x00b'"), std::string::npos) << with_nul;
}

TEST_F(Policies, OnlyARegularFileOfBoundedSizeIsRead) {
  const std::string dir = ::testing::TempDir();
  const std::string fifo = dir + "native_ops_policy_fifo";
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string big = dir + "native_ops_big_policy.json";
  std::ofstream(big).close();
  ASSERT_EQ(truncate(big.c_str(), (off_t{16} << 20) + 1), 0);
  const std::vector<std::pair<std::string, std::string>> refused = {
      {dir, "is a directory"},
      {fifo, "is a FIFO"},
      {"/dev/zero", "is a character device"},
      {big, "is 16777217 bytes: a policy may have 16777216 at most"},
      {dir + "no_such.json", "No such file"}};
  for (const auto& [path, why] : refused) {
    try {
      load_policy(path);
      ADD_FAILURE() << path << " was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
  std::remove(fifo.c_str());
  std::remove(big.c_str());
}

TEST_F(Policies, NodesAfterAnUnconditionalNodeAreReportedUnreachable) {
  Options unconditional;
  unconditional.unconditional_override = true;
  register_op_override<at::_ops::mul_Tensor>(
      "ghost", DispatchKey::CPU, {}, [](const at::Tensor& a, const at::Tensor&) { return a; }, unconditional);
  register_op_override<at::_ops::div_Tensor>(
      "alpha", DispatchKey::CPU, {}, [](const at::Tensor& a, const at::Tensor&) { return a; }, unconditional);
  register_op_override<at::_ops::div_Tensor>(
      "beta", DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) { return true; },
      [](const at::Tensor& a, const at::Tensor&) { return a; });
  const PolicyPlan plan = plan_policy(parse_policy(R"({"version": 1})"));
  ASSERT_EQ(plan.warnings.size(), 1u) << "the unavailable ghost node blocks nothing";
  EXPECT_EQ(plan.warnings[0],
            "aten::div.Tensor @ CPU: div_Tensor_beta_0 is unreachable: it comes after the unconditional node "
            "div_Tensor_alpha_0");
}

TEST_F(Policies, EveryExamplePolicyIsValidAgainstTheBuiltins) {
  for (const char* name : {"seed", "triton-only", "prefer-cuda", "disable-all"}) {
    const std::string path = std::string(POLICIES_DIR) + "/" + name + ".json";
    EXPECT_NO_THROW(plan_policy(load_policy(path))) << path;
  }
}

TEST_F(Policies, TheSchemaNamesExactlyTheKeysTheParserAccepts) {
  std::ifstream file(std::string(POLICIES_DIR) + "/policy.schema.json");
  const auto schema = nlohmann::json::parse(file);
  std::string json = R"({"version": 2)";
  for (const auto& [key, value] : schema["properties"].items()) {
    if (key == "version") continue;
    json += ", \"" + key + "\": " +
            (value["type"] == "array"    ? std::string("[]")
             : value["type"] == "string" ? "\"x\""
                                         : "{}");
  }
  EXPECT_NO_THROW(parse_policy(json + "}")) << json;
  std::string selector = R"({"version": 1, "disable": [{)";
  bool first = true;
  for (const auto& [key, value] : schema["$defs"]["selector"]["properties"].items()) {
    selector += std::string(first ? "" : ", ") + "\"" + key + "\": \"x\"";
    first = false;
  }
  EXPECT_NO_THROW(parse_policy(selector + "}]}")) << selector;
  EXPECT_THROW(parse_policy(R"({"version": 1, "not_in_schema": 1})"), Error);
}

}  // namespace
}  // namespace native_ops
