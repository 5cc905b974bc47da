// init(): what it must not do (load a DSL runtime, initialise CUDA), the off switches,
// and bad environment values. Each test runs in its own process, so each gets its own
// first init().
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <ATen/Context.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/rand.h>

#include "support.h"

namespace native_ops {
namespace {

// The shared objects mapped into this process.
std::set<std::string> mapped_libraries() {
  std::set<std::string> libraries;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const size_t path = line.find('/');
    if (path != std::string::npos && line.find(".so", path) != std::string::npos) libraries.insert(line.substr(path));
  }
  return libraries;
}

// cuInit opens the driver's device files (/dev/nvidiactl, /dev/nvidia0, ...).
bool cuda_device_files_open() {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ignored;
    if (std::filesystem::read_symlink(entry.path(), ignored).string().rfind("/dev/nvidia", 0) == 0) return true;
  }
  return false;
}

void expect_nothing_installed() {
  for (const GraphInfo& graph : graphs()) {
    EXPECT_FALSE(graph.router_installed) << graph.op_symbol;
  }
  at::bmm(at::rand({2, 3, 1}), at::rand({2, 1, 4}));
  EXPECT_EQ(testing::hits("bmm_cpp_0"), 0u);
}

TEST(Init, LoadsNoDslRuntimeAndDoesNotInitialiseCuda) {
  const std::set<std::string> before = mapped_libraries();
  init();
  for (const std::string& library : mapped_libraries()) {
    EXPECT_TRUE(before.count(library)) << "init() loaded " << library;
  }
  EXPECT_FALSE(cuda_device_files_open()) << "init() initialised CUDA";
  EXPECT_TRUE(testing::graph("bmm").router_installed);
  // Positive control: where there is a GPU, a CUDA query does open the device files.
  if (at::globalContext().hasCUDA()) {
    EXPECT_TRUE(cuda_device_files_open()) << "the check above cannot see CUDA initialisation";
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

TEST(Init, TheSecondSwitchIsCheckedWhenTheFirstIsOn) {
  setenv("NATIVE_OPS_DISABLE", "1", 1);
  setenv("TORCH_DISABLE_NATIVE_JIT", "maybe", 1);
  try {
    init();
    ADD_FAILURE() << "TORCH_DISABLE_NATIVE_JIT=maybe was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TORCH_DISABLE_NATIVE_JIT='maybe'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(is_initialized());
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

TEST(Init, ABadOrderingPolicyOrFunctionFailsInitAndInstallsNothing) {
  const std::pair<const char*, const char*> cases[] = {
      {"NATIVE_OPS_ORDER_POLICY", "/no/such/policy.json"},
      {"NATIVE_OPS_ORDER_FN", "libnothing.so"},
      {"NATIVE_OPS_ORDER_FN", "/no/such/lib.so:order"},
  };
  for (const auto& [variable, value] : cases) {
    setenv(variable, value, 1);
    try {
      init();
      ADD_FAILURE() << variable << "=" << value << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(variable), std::string::npos) << e.what();
    }
    EXPECT_FALSE(is_initialized());
    expect_nothing_installed();
    unsetenv(variable);
  }
  setenv("NATIVE_OPS_ORDER_POLICY", "p.json", 1);
  setenv("NATIVE_OPS_ORDER_FN", "lib.so:f", 1);
  EXPECT_THROW(init(), Error) << "both set";
  unsetenv("NATIVE_OPS_ORDER_POLICY");
  unsetenv("NATIVE_OPS_ORDER_FN");
  init();
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
