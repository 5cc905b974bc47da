// Loading plugins: origins, refusals, a registration that fails half-way, loading twice.
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include <ATen/core/Tensor.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/atan2.h>
#include <ATen/ops/full.h>
#include <ATen/ops/hypot.h>

#include "native_ops/plugin.h"
#include "support.h"

namespace native_ops {
namespace {

std::string canonical(const char* path) { return std::filesystem::canonical(path).string(); }

TEST(Plugins, APluginsNodesRouteAndNameTheirLibrary) {
  load_plugin(VENDOR_PLUGIN);
  load_plugin(VENDOR_PLUGIN);  // once per path
  init();
  const auto node = find_node("hypot_vendor_0");
  ASSERT_TRUE(node);
  EXPECT_EQ(node->origin, canonical(VENDOR_PLUGIN));
  EXPECT_TRUE(testing::graph("hypot").router_installed);
  EXPECT_EQ(testing::graph("hypot").nodes.size(), 1u);
  const at::Tensor a = at::full({3}, 3.0);
  const at::Tensor b = at::full({3}, 4.0);
  EXPECT_TRUE(testing::close(at::hypot(a, b), at::full({3}, 5.0)));
  EXPECT_EQ(testing::hits("hypot_vendor_0"), 1u);
}

TEST(Plugins, MissingFilesAndOtherLibrariesAreRefused) {
  const std::string missing = testing::error_of([] { load_plugin("/no/such/plugin.so"); });
  EXPECT_NE(missing.find("no such file"), std::string::npos) << missing;
  const std::string not_a_plugin = testing::error_of([] { load_plugin(NOT_A_PLUGIN); });
  EXPECT_NE(not_a_plugin.find("is not a native-ops plugin"), std::string::npos) << not_a_plugin;
}

TEST(Plugins, AFailedRegistrationLeavesItsNodesUnavailable) {
  init();
  const std::string error = testing::error_of([] { load_plugin(FAILING_PLUGIN); });
  EXPECT_NE(error.find("failed to register its overrides"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown op aten::no_such_op"), std::string::npos) << error;
  const auto node = find_node("atan2_cpp_0");
  ASSERT_TRUE(node);
  EXPECT_EQ(node->state, NodeState::unavailable);
  EXPECT_NE(node->reason.find("its plugin failed to register"), std::string::npos) << node->reason;
  EXPECT_FALSE(testing::graph("atan2").router_installed);
}

TEST(Plugins, NativeOpsPluginsIsLoadedByInitAndABadEntryNamesTheVariable) {
  setenv("NATIVE_OPS_PLUGINS", (std::string("/no/such.so:") + VENDOR_PLUGIN).c_str(), 1);
  const std::string error = testing::error_of([] { init(); });
  EXPECT_NE(error.find("NATIVE_OPS_PLUGINS: plugin /no/such.so: no such file"), std::string::npos) << error;
  EXPECT_FALSE(is_initialized());
  setenv("NATIVE_OPS_PLUGINS", (std::string(":") + VENDOR_PLUGIN + ":").c_str(), 1);
  init();
  EXPECT_TRUE(find_node("hypot_vendor_0").has_value());
  EXPECT_TRUE(testing::graph("hypot").router_installed);
}

// What the atan2 overrides of the test plugins would return if they ran: their first input.
void expect_atan2_is_atens() {
  const at::Tensor a = at::full({4}, 1.0);
  const at::Tensor b = at::full({4}, 2.0);
  EXPECT_TRUE(at::allclose(at::atan2(a, b), at::full({4}, std::atan2(1.0, 2.0))));
}

TEST(Plugins, APluginRefusedForItsAbiLeavesWhatItsConstructorsRegisteredUnavailable) {
  init();
  const std::string error = testing::error_of([] { load_plugin(REFUSED_ABI_PLUGIN); });
  EXPECT_NE(error.find("was built for plugin ABI 999"), std::string::npos) << error;
  const std::optional<NodeInfo> node = find_node("atan2_cpp_0");
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->state, NodeState::unavailable);
  EXPECT_NE(node->reason.find("its plugin was refused"), std::string::npos) << node->reason;
  expect_atan2_is_atens();
}

TEST(Plugins, APluginThatThrowsANonStandardExceptionLeavesItsNodesUnavailable) {
  init();
  const std::string error = testing::error_of([] { load_plugin(THROWING_PLUGIN); });
  EXPECT_NE(error.find("not a std::exception"), std::string::npos) << error;
  EXPECT_EQ(find_node("atan2_cpp_0")->state, NodeState::unavailable);
  expect_atan2_is_atens();
}

TEST(Plugins, AFifoOrDirectoryIsRefusedWithoutOpeningIt) {
  const std::string fifo = ::testing::TempDir() + "native_ops_plugin_fifo";
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, ::testing::TempDir()}) {
    const std::string error = testing::error_of([&] { load_plugin(path); });
    EXPECT_NE(error.find("is not a regular file"), std::string::npos) << path << ": " << error;
  }
  std::remove(fifo.c_str());
}

}  // namespace
}  // namespace native_ops
