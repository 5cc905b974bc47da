// The triton DSL beyond what the conformance sweep checks: the build compiled the kernels
// ahead of time and embedded them with their launch metadata, every variant of the row
// ladder among them; rows pick their variant and are declined outside the compiled layout;
// the DSL reports the Triton that built them and is unavailable, with the reason, without
// a GPU; and on a GPU its
// kernels launch on the current stream and on the tensor's device, and the persistent ones
// get every row right over many rows a program.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "dsls/triton_kernels.h"
#include "triton_rows.h"
#include "native_ops/policy.h"
#include "support.h"

namespace native_ops {
namespace {

bool triton_dsl_available() {
  const Dsl* dsl = find_dsl("triton");
  return dsl != nullptr && dsl->runtime_available();
}

// The triton nodes first, for the routing tests (the cuda ones are registered first).
void prefer_triton() {
  apply_policy(parse_policy(R"({"version": 1, "dsl_priority": ["triton", "cuda", "cpp"]})"));
}

TEST(TritonKernels, TheBuildEmbedsCompiledKernels) {
  const triton::ArtifactTable table = triton::artifacts();
  if (table.size == 0) GTEST_SKIP() << "this build has no Triton kernels: " << find_dsl("triton")->unavailable_reason();
  EXPECT_STREQ(triton::compiler_version(), "3.6.0");  // the pinned Triton, and the H200 machine's
  for (size_t i = 0; i < table.size; ++i) {
    const triton::Artifact& kernel = table.data[i];
    ASSERT_GT(kernel.cubin_size, 4u) << kernel.key;
    EXPECT_EQ(std::memcmp(kernel.cubin, "\x7f" "ELF", 4), 0) << kernel.key << ": a cubin is an ELF image";
    EXPECT_GT(kernel.num_warps, 0) << kernel.key;
    EXPECT_GT(kernel.arguments, 0) << kernel.key;
    EXPECT_GT(std::strlen(kernel.name), 0u) << kernel.key;
    EXPECT_EQ(&triton::find(kernel.key), &kernel);
  }
  EXPECT_NO_THROW(triton::find("outer_product:bf16:wide:contiguous"));
  // Every variant of the row ladder (kernels/triton_rows.h) that the row impls resolve: a
  // ladder changed on one side only (kernels/triton_common.py) is caught here, not on a GPU.
  for (const char* dtype : triton::kDtypeKeys) {
    for (const std::string& suffix : kernels::triton_rows::key_suffixes()) {
      for (const std::string& prefix : {std::string("softmax_rows:") + dtype, std::string("log_softmax_rows:") + dtype,
                                        std::string("rms_norm_rows:") + dtype + ":plain",
                                        std::string("rms_norm_rows:") + dtype + ":weight"}) {
        EXPECT_NO_THROW(triton::find(prefix + ":" + suffix)) << prefix << ":" << suffix;
      }
    }
  }
}

TEST(TritonKernels, RowsTakeTheNarrowestVariantThatHoldsThem) {
  using kernels::triton_rows::key_suffixes;
  using kernels::triton_rows::variant;
  const std::vector<std::string> suffixes = key_suffixes();
  ASSERT_EQ(suffixes.size(), kernels::triton_rows::kVariants);
  const std::vector<std::pair<int64_t, std::string>> expected = {
      {16, "1024"},         {1024, "1024"},    {1040, "2048"},       {4096, "4096"},      {16384, "16384"},
      {16400, "persistent"}, {32000, "persistent"}, {32768, "persistent"}, {32784, "chunked"}, {1 << 20, "chunked"}};
  for (const auto& [width, suffix] : expected) {
    ASSERT_LT(variant(width), suffixes.size()) << width;
    EXPECT_EQ(suffixes[variant(width)], suffix) << "rows of " << width << " elements";
    EXPECT_EQ(kernels::triton_rows::persistent(width), suffix == "persistent") << width;
    // The variants that take rows in turn get the row count and a grid of a few programs
    // an SM: one for the persistent kernel, whose row and next fill an SM's registers.
    EXPECT_EQ(kernels::triton_rows::rows_in_turn(width), suffix == "persistent" || suffix == "chunked") << width;
    if (kernels::triton_rows::rows_in_turn(width)) {
      EXPECT_EQ(kernels::triton_rows::programs_per_multiprocessor(width), suffix == "persistent" ? 1 : 2) << width;
    }
  }
}

TEST(TritonKernels, RowsOutsideTheCompiledLayoutAreDeclinedWithTheReason) {
  alignas(16) static const char row[64] = {};
  EXPECT_TRUE(kernels::triton_rows::layout_applies(32, {row, row + 16}).accepted());
  for (const Verdict& verdict : {kernels::triton_rows::layout_applies(24, {row}),
                                 kernels::triton_rows::layout_applies(32, {row, row + 2})}) {
    ASSERT_FALSE(verdict.accepted());
    EXPECT_NE(std::string(verdict.reason()).find("multiple of 16 elements, 16-byte aligned"), std::string::npos);
  }
  const Verdict too_wide = kernels::triton_rows::layout_applies(int64_t{1} << 31, {row});
  ASSERT_FALSE(too_wide.accepted());
  EXPECT_NE(std::string(too_wide.reason()).find("longer than one launch"), std::string::npos);
}

TEST(TritonKernels, AnUnknownKernelIsAnErrorThatSaysHowToFixIt) {
  try {
    triton::find("softmax_rows:f64:4096");
    FAIL() << "no such kernel";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("softmax_rows:f64:4096"), std::string::npos) << message;
    EXPECT_TRUE(message.find("rebuild") != std::string::npos || message.find("without Triton") != std::string::npos)
        << message;
  }
}

TEST(TritonKernels, UnavailableWithAReasonWithoutAGpu) {
  const Dsl* dsl = find_dsl("triton");
  ASSERT_NE(dsl, nullptr);
  const std::optional<NodeInfo> node = find_node("_softmax_triton_0");
  ASSERT_TRUE(node.has_value());
  if (triton_dsl_available()) {
    EXPECT_EQ(node->state, NodeState::active);
    EXPECT_NE(dsl->runtime_version().find("Triton 3.6.0"), std::string::npos) << dsl->runtime_version();
  } else {
    EXPECT_EQ(node->state, NodeState::unavailable);
    EXPECT_FALSE(dsl->unavailable_reason().empty());
    EXPECT_NE(node->reason.find("dsl triton is unavailable"), std::string::npos) << node->reason;
  }
}

TEST(TritonKernels, RunOnTheCurrentStream) {
  if (!triton_dsl_available()) GTEST_SKIP() << find_dsl("triton")->unavailable_reason();
  init();
  prefer_triton();
  const auto* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  const c10::Stream side = guard->getStreamFromGlobalPool(c10::Device(c10::kCUDA, 0));
  const at::Tensor a = at::randn({4096, 4096}, at::kCUDA);
  guard->synchronizeDevice(0);
  at::Tensor input, output;
  {
    const c10::StreamGuard on_side(side);
    // A long matmul on the side stream writes the input: a kernel launched on any other
    // stream would read it before it is written.
    input = at::mm(a, a).narrow(0, 0, 256);
    const uint64_t before = testing::hits("_softmax_triton_0");
    output = at::_softmax(input, -1, false);
    EXPECT_EQ(testing::hits("_softmax_triton_0"), before + 1);
  }
  side.synchronize();
  EXPECT_TRUE(testing::close(output.cpu(), at::_softmax(input.cpu(), -1, false)));
}

// Rows of 16385-32768 elements take the persistent kernels, one program per SM taking every
// (grid)-th row and loading the next while it writes the current: at 2048 rows each program
// takes 15 or 16, far more than in the sweep's samples.
TEST(TritonKernels, PersistentKernelsTakeManyRowsEach) {
  if (!triton_dsl_available()) GTEST_SKIP() << find_dsl("triton")->unavailable_reason();
  init();
  prefer_triton();
  const at::Tensor x = at::randn({2048, 32000}, at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16));
  for (const bool log : {false, true}) {
    const char* node = log ? "_log_softmax_triton_0" : "_softmax_triton_0";
    auto softmax = [&] { return log ? at::_log_softmax(x, -1, false) : at::_softmax(x, -1, false); };
    const uint64_t before = testing::hits(node);
    const at::Tensor y = softmax();
    EXPECT_EQ(testing::hits(node), before + 1) << node;
    EXPECT_TRUE(testing::close(y.cpu(), testing::aten_reference(log ? "_log_softmax" : "_softmax", softmax).cpu()))
        << node;
  }
  const at::Tensor weight = at::randn({32000}, x.options());
  auto rms_norm = [&] { return at::_fused_rms_norm(x, {32000}, weight, 1e-6); };
  const uint64_t before = testing::hits("_fused_rms_norm_triton_0");
  const auto [y, rstd] = rms_norm();
  EXPECT_EQ(testing::hits("_fused_rms_norm_triton_0"), before + 1);
  const at::Tensor y_aten = testing::aten_reference("_fused_rms_norm", [&] { return std::get<0>(rms_norm()); });
  const at::Tensor rstd_aten = testing::aten_reference("_fused_rms_norm", [&] { return std::get<1>(rms_norm()); });
  EXPECT_TRUE(testing::close(y.cpu(), y_aten.cpu()));
  EXPECT_TRUE(testing::close(rstd.cpu(), rstd_aten.cpu()));
}

TEST(TritonKernels, RunOnTheTensorsDevice) {
  if (!triton_dsl_available()) GTEST_SKIP() << find_dsl("triton")->unavailable_reason();
  if (c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->deviceCount() < 2) {
    GTEST_SKIP() << "one GPU here: the second-device test needs two";
  }
  init();
  prefer_triton();
  const c10::Device second(c10::kCUDA, 1);
  const at::Tensor x = at::randn({64, 4096}, at::TensorOptions().device(second));
  const uint64_t before = testing::hits("_softmax_triton_0");
  const at::Tensor y = at::_softmax(x, -1, false);  // the current device stays cuda:0
  EXPECT_EQ(testing::hits("_softmax_triton_0"), before + 1);
  EXPECT_EQ(y.device(), second);
  EXPECT_TRUE(testing::close(y.cpu(), at::_softmax(x.cpu(), -1, false)));
}

}  // namespace
}  // namespace native_ops
