// init(): what it must not do (load a DSL runtime, initialise CUDA), the off switches,
// and bad environment values. Each test runs in its own process, so each gets its own
// first init().
#include <cstdlib>
#include <fstream>

#include <ATen/Context.h>
#include <ATen/ATen.h>

#include "support.h"

namespace native_ops {
namespace {

std::string mapped_libraries() {
  std::ifstream maps("/proc/self/maps");
  return std::string(std::istreambuf_iterator<char>(maps), std::istreambuf_iterator<char>());
}

void expect_nothing_installed() {
  for (const GraphInfo& graph : graphs()) {
    EXPECT_FALSE(graph.router_installed) << graph.op_symbol;
  }
  at::bmm(at::rand({2, 3, 1}), at::rand({2, 1, 4}));
  EXPECT_EQ(testing::hits("bmm_cpp_0"), 0u);
}

TEST(Init, LoadsNoDslRuntimeAndDoesNotInitialiseCuda) {
  init();
  const std::string maps = mapped_libraries();
  // The CUDA driver library is loaded by the first CUDA runtime call (cuInit).
  for (const char* library : {"libcuda.so", "libnvrtc", "libtriton", "libpython"}) {
    EXPECT_EQ(maps.find(library), std::string::npos) << library << " was loaded by init()";
  }
  EXPECT_TRUE(testing::graph("bmm").router_installed);
  // Positive control: a CUDA query does load the driver where there is one.
  if (at::globalContext().hasCUDA()) {
    EXPECT_NE(mapped_libraries().find("libcuda.so"), std::string::npos)
        << "the check above cannot see CUDA initialisation";
  }
}

TEST(Init, NativeOpsDisableTurnsEverythingOff) {
  setenv("NATIVE_OPS_DISABLE", "1", 1);
  init();
  EXPECT_TRUE(is_disabled());
  expect_nothing_installed();
}

TEST(Init, TorchDisableNativeJitIsHonoured) {
  setenv("TORCH_DISABLE_NATIVE_JIT", "1", 1);
  init();
  EXPECT_TRUE(is_disabled());
  expect_nothing_installed();
}

TEST(Init, ZeroMeansOn) {
  setenv("NATIVE_OPS_DISABLE", "0", 1);
  init();
  EXPECT_FALSE(is_disabled());
  EXPECT_TRUE(testing::graph("bmm").router_installed);
}

TEST(Init, ABadValueFailsInitNamingTheVariableAndInstallsNothing) {
  for (const char* variable : {"NATIVE_OPS_DISABLE", "TORCH_DISABLE_NATIVE_JIT", "NATIVE_OPS_LOG"}) {
    setenv(variable, "maybe", 1);
    try {
      init();
      ADD_FAILURE() << variable << "=maybe was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(variable) + "='maybe'"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(is_initialized());
    expect_nothing_installed();
    unsetenv(variable);
  }
  init();  // fixed: now it works
  EXPECT_TRUE(testing::graph("bmm").router_installed);
}

TEST(Init, TorchLogsTurnsOnDebugLogging) {
  setenv("TORCH_LOGS", "dynamo,+native_dsl", 1);
  init();
  EXPECT_EQ(log::level(), log::Level::debug);
  EXPECT_TRUE(log::debug_enabled());
}

TEST(Init, QuietByDefault) {
  unsetenv("NATIVE_OPS_LOG");
  unsetenv("TORCH_LOGS");
  init();
  EXPECT_EQ(log::level(), log::Level::warn);
  EXPECT_FALSE(log::debug_enabled());
}

}  // namespace
}  // namespace native_ops
