// The triton DSL beyond what the conformance sweep checks: the build compiled the kernels
// ahead of time and embedded them with their launch metadata, every variant of the row
// ladder among them; rows pick their variant and are declined outside the compiled layout;
// rows over a cluster get a program per slice, and a grid whose clusters a kernel cannot
// take is refused before any launch; the DSL reports the Triton that built them and is
// unavailable, with the reason, without a GPU; and on a GPU its kernels launch on the
// current stream and on the tensor's device, and the row kernels get every row right over
// many rows. The shipped selection tables stay out (NATIVE_OPS_TUNED_TABLES=0): they send
// some of these shapes to cuda or aten, and the tests judge the triton kernels.
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/_fused_rms_norm.h>
#include <ATen/ops/_log_softmax.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/randn.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "dsls/triton/launch.h"
#include "dsls/triton/rows.h"
#include "native_ops/policy.h"
#include "support.h"

namespace native_ops {
namespace {

const bool kRegistrationOrder = setenv("NATIVE_OPS_TUNED_TABLES", "0", 1) == 0;

bool triton_dsl_available() {
  const Dsl* dsl = find_dsl("triton");
  return dsl != nullptr && dsl->runtime_available();
}

// The triton nodes first, for the routing tests (the cuda ones are registered first).
void prefer_triton() {
  ASSERT_TRUE(kRegistrationOrder);
  apply_policy(parse_policy(R"({"version": 1, "dsl_priority": ["triton", "cuda", "cpp"]})"));
}

TEST(TritonKernels, TheBuildEmbedsCompiledKernels) {
  const triton::ArtifactTable table = triton::artifacts();
  if (table.size == 0) GTEST_SKIP() << "this build has no Triton kernels: " << find_dsl("triton")->unavailable_reason();
  EXPECT_STREQ(triton::compiler_version(), "3.6.0");  // the pinned Triton, and the H200 machine's
  for (size_t i = 0; i < table.size; ++i) {
    const triton::Artifact& kernel = table.data[i];
    ASSERT_GT(kernel.cubin_size, 4u) << kernel.key;
    EXPECT_EQ(std::memcmp(kernel.cubin,
                          "\x7f"
                          "ELF",
                          4),
              0)
        << kernel.key << ": a cubin is an ELF image";
    EXPECT_GT(kernel.num_warps, 0) << kernel.key;
    EXPECT_GT(kernel.arguments, 0) << kernel.key;
    EXPECT_GT(std::strlen(kernel.name), 0u) << kernel.key;
    EXPECT_EQ(&triton::find(kernel.key), &kernel);
  }
  EXPECT_NO_THROW(triton::find("outer_product:bf16:wide:contiguous"));
  // Every variant of the row ladder (lib/src/dsls/triton/rows.h) that the row impls resolve: a
  // ladder changed on one side only (lib/src/dsls/triton/triton_common.py) is caught here, not on a GPU.
  for (const char* dtype : triton::kDtypeKeys) {
    for (const std::string& suffix : kernels::triton_rows::key_suffixes()) {
      for (const std::string& prefix :
           {std::string("softmax_rows:") + dtype, std::string("log_softmax_rows:") + dtype,
            std::string("rms_norm_rows:") + dtype + ":plain", std::string("rms_norm_rows:") + dtype + ":weight"}) {
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
      {16, "1024"},        {1024, "1024"},      {1040, "2048"},          {4096, "4096"},
      {16384, "16384"},    {16400, "32768"},    {32000, "32768"},        {32768, "32768"},
      {32784, "cluster"},  {65536, "cluster"},  {65552, "wide_cluster"}, {131072, "wide_cluster"},
      {131088, "chunked"}, {1 << 20, "chunked"}};
  for (const auto& [width, suffix] : expected) {
    ASSERT_LT(variant(width), suffixes.size()) << width;
    EXPECT_EQ(suffixes[variant(width)], suffix) << "rows of " << width << " elements";
    // The variants that take rows in turn get the row count and a grid of a few programs
    // an SM instead of one program a row; the cluster variants a cluster a row.
    EXPECT_EQ(kernels::triton_rows::rows_in_turn(width), suffix == "32768" || suffix == "chunked") << width;
    EXPECT_EQ(kernels::triton_rows::clustered(width), suffix == "cluster" || suffix == "wide_cluster") << width;
  }
}

TEST(TritonKernels, ARowOverAClusterTakesAProgramPerSliceOfItsColumns) {
  const triton::ArtifactTable table = triton::artifacts();
  if (table.size == 0) GTEST_SKIP() << "this build has no Triton kernels: " << find_dsl("triton")->unavailable_reason();
  const triton::Artifact& kernel = triton::find("softmax_rows:bf16:cluster");
  const triton::Artifact& wide = triton::find("softmax_rows:bf16:wide_cluster");
  EXPECT_EQ(kernel.max_cluster, 8u);
  EXPECT_EQ(wide.max_cluster, 16u);
  EXPECT_EQ(triton::find("softmax_rows:bf16:32768").max_cluster, 1u);
  EXPECT_EQ(triton::find("rms_norm_rows:f32:weight:wide_cluster").max_cluster, 16u);
  const at::Tensor cpu = at::empty({1});
  // 32784 columns: four full slices of 8192 and one of 16; 65536: eight full ones; 73744:
  // nine and one of 16; 131072: sixteen full ones.
  for (const auto& [width, cluster] : {std::pair<int64_t, unsigned>{32784, 5},
                                       {40000, 5},
                                       {57344, 7},
                                       {65536, 8},
                                       {65552, 9},
                                       {73744, 10},
                                       {100352, 13},
                                       {131072, 16}}) {
    const triton::Grid grid = kernels::triton_rows::rows_grid(cluster > 8 ? wide : kernel, 3, width, cpu);
    EXPECT_EQ(grid.cluster, cluster) << width;
    EXPECT_EQ(grid.x, 3 * cluster) << width;
  }
}

TEST(TritonKernels, AGridWhoseClustersTheKernelCannotTakeIsRefusedBeforeAnyLaunch) {
  const triton::ArtifactTable table = triton::artifacts();
  if (table.size == 0) GTEST_SKIP() << "this build has no Triton kernels: " << find_dsl("triton")->unavailable_reason();
  const at::Tensor cpu = at::empty({1});  // never reached: the grid is checked first
  const void* pointer = nullptr;
  const int32_t width = 65536;
  const auto refused = [&](const triton::Artifact& kernel, triton::Grid grid, const std::string& why) {
    try {
      triton::launch(kernel, grid, {&pointer, &pointer, &width}, cpu);
      ADD_FAILURE() << kernel.key << " launched over " << grid.x << " programs in clusters of " << grid.cluster;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(kernel.key), std::string::npos) << e.what();
    }
  };
  const triton::Artifact& clustered = triton::find("softmax_rows:bf16:cluster");
  refused(clustered, {20, 1, 1, 8}, "that divide the grid");      // 20 programs are not clusters of 8
  refused(clustered, {32, 1, 1, 16}, "clusters of 1 to 8 that");  // beyond the portable 8
  refused(clustered, {32, 1, 1, 0}, "that divide the grid");
  refused(triton::find("softmax_rows:bf16:wide_cluster"), {34, 1, 1, 17}, "clusters of 1 to 16 that");
  refused(triton::find("softmax_rows:bf16:16384"), {16, 1, 1, 8}, "does not exchange through a cluster");
}

TEST(TritonKernels, KernelsTakingRowsInTurnFillAnSmWith32Warps) {
  EXPECT_EQ(triton::programs_per_multiprocessor(32), 1);
  EXPECT_EQ(triton::programs_per_multiprocessor(16), 2);
  EXPECT_EQ(triton::programs_per_multiprocessor(8), 4);
  EXPECT_EQ(triton::programs_per_multiprocessor(64), 1);  // never none
}

TEST(TritonKernels, RowsOutsideTheCompiledLayoutAreDeclinedWithTheReason) {
  alignas(16) static const char row[64] = {};
  EXPECT_TRUE(kernels::triton_rows::layout_applies(32, {row, row + 16}).accepted());
  for (const Verdict& verdict :
       {kernels::triton_rows::layout_applies(24, {row}), kernels::triton_rows::layout_applies(32, {row, row + 2})}) {
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

// Rows wider than 16384 elements, at row counts far beyond the sweep's samples. Up to 32768
// they are taken in turn by a few programs per SM, each taking several (2048 rows: 15 or 16
// each) and holding them whole (16-bit: the persistent kernel, which loads the next row
// while it writes the current; float32: two chunks); up to 131072 each is split over a
// cluster (40976: a cluster of 6, the last slice 16 columns; 65536: of 8, every slice
// full; 73744: of 10, the last slice 16 columns; 131072: of 16, full), hundreds to
// thousands of clusters in turn; wider ones are read in chunks (139280: the last softmax
// chunk of 16 columns; 300 rows: 1 or 2 a program at two programs an SM, 2 or 3 at one).
TEST(TritonKernels, RowKernelsGetEveryRowRightOverManyRows) {
  if (!triton_dsl_available()) GTEST_SKIP() << find_dsl("triton")->unavailable_reason();
  init();
  prefer_triton();
  for (const auto& [rows, width] : {std::pair<int64_t, int64_t>{2048, 32000},
                                    {1500, 40976},
                                    {1024, 65536},
                                    {600, 73744},
                                    {512, 131072},
                                    {300, 139280}}) {
    for (const at::ScalarType dtype : {at::kBFloat16, at::kFloat}) {
      const at::Tensor x = at::randn({rows, width}, at::TensorOptions().device(at::kCUDA).dtype(dtype));
      const std::string shape = "[" + std::to_string(rows) + "," + std::to_string(width) + "] " + c10::toString(dtype);
      for (const bool log : {false, true}) {
        const char* node = log ? "_log_softmax_triton_0" : "_softmax_triton_0";
        auto softmax = [&] { return log ? at::_log_softmax(x, -1, false) : at::_softmax(x, -1, false); };
        const uint64_t before = testing::hits(node);
        const at::Tensor y = softmax();
        EXPECT_EQ(testing::hits(node), before + 1) << node << " " << shape;
        EXPECT_TRUE(testing::close(y.cpu(), testing::aten_reference(log ? "_log_softmax" : "_softmax", softmax).cpu()))
            << node << " " << shape;
      }
      const at::Tensor weight = at::randn({width}, x.options());
      auto rms_norm = [&] { return at::_fused_rms_norm(x, {width}, weight, 1e-6); };
      const uint64_t before = testing::hits("_fused_rms_norm_triton_0");
      const auto [y, rstd] = rms_norm();
      EXPECT_EQ(testing::hits("_fused_rms_norm_triton_0"), before + 1) << shape;
      const at::Tensor y_aten = testing::aten_reference("_fused_rms_norm", [&] { return std::get<0>(rms_norm()); });
      const at::Tensor rstd_aten = testing::aten_reference("_fused_rms_norm", [&] { return std::get<1>(rms_norm()); });
      EXPECT_TRUE(testing::close(y.cpu(), y_aten.cpu())) << shape;
      EXPECT_TRUE(testing::close(rstd.cpu(), rstd_aten.cpu())) << shape;
    }
  }
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
