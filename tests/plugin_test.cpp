// Loading plugins: origins, refusals, a registration that fails half-way, loading twice.
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include <ATen/ATen.h>

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
  try {
    load_plugin("/no/such/plugin.so");
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos) << e.what();
  }
  try {
    load_plugin(NOT_A_PLUGIN);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a native-ops plugin"), std::string::npos) << e.what();
  }
}

TEST(Plugins, AFailedRegistrationLeavesItsNodesUnavailable) {
  init();
  try {
    load_plugin(FAILING_PLUGIN);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("failed to register its overrides"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown op aten::no_such_op"), std::string::npos) << e.what();
  }
  const auto node = find_node("atan2_cpp_0");
  ASSERT_TRUE(node);
  EXPECT_EQ(node->state, NodeState::unavailable);
  EXPECT_NE(node->reason.find("its plugin failed to register"), std::string::npos) << node->reason;
  EXPECT_FALSE(testing::graph("atan2").router_installed);
}

TEST(Plugins, NativeOpsPluginsIsLoadedByInitAndABadEntryNamesTheVariable) {
  setenv("NATIVE_OPS_PLUGINS", (std::string("/no/such.so:") + VENDOR_PLUGIN).c_str(), 1);
  try {
    init();
    ADD_FAILURE() << "init accepted a missing plugin";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NATIVE_OPS_PLUGINS: plugin /no/such.so: no such file"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(is_initialized());
  setenv("NATIVE_OPS_PLUGINS", (std::string(":") + VENDOR_PLUGIN + ":").c_str(), 1);
  init();
  EXPECT_TRUE(find_node("hypot_vendor_0").has_value());
  EXPECT_TRUE(testing::graph("hypot").router_installed);
}

}  // namespace
}  // namespace native_ops

namespace native_ops {
namespace {

// What the atan2 overrides of the test plugins would return if they ran: their first input.
void expect_atan2_is_atens() {
  const at::Tensor a = at::full({4}, 1.0);
  const at::Tensor b = at::full({4}, 2.0);
  EXPECT_TRUE(at::allclose(at::atan2(a, b), at::full({4}, std::atan2(1.0, 2.0))));
}

TEST(Plugins, APluginRefusedForItsAbiLeavesWhatItsConstructorsRegisteredUnavailable) {
  init();
  try {
    load_plugin(REFUSED_ABI_PLUGIN);
    FAIL() << "loaded a plugin built for ABI 999";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("was built for plugin ABI 999"), std::string::npos) << e.what();
  }
  const std::optional<NodeInfo> node = find_node("atan2_cpp_0");
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->state, NodeState::unavailable);
  EXPECT_NE(node->reason.find("its plugin was refused"), std::string::npos) << node->reason;
  expect_atan2_is_atens();
}

TEST(Plugins, APluginThatThrowsANonStandardExceptionLeavesItsNodesUnavailable) {
  init();
  try {
    load_plugin(THROWING_PLUGIN);
    FAIL() << "a throwing registration was not reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a std::exception"), std::string::npos) << e.what();
  }
  EXPECT_EQ(find_node("atan2_cpp_0")->state, NodeState::unavailable);
  expect_atan2_is_atens();
}

TEST(Plugins, AFifoOrDirectoryIsRefusedWithoutOpeningIt) {
  const std::string fifo = ::testing::TempDir() + "native_ops_plugin_fifo";
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, ::testing::TempDir()}) {
    try {
      load_plugin(path);
      FAIL() << path;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a regular file"), std::string::npos) << e.what();
    }
  }
  std::remove(fifo.c_str());
}

}  // namespace
}  // namespace native_ops
