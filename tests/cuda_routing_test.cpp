// Routing at the CUDA key: the router reaches CUDA tensors, falls through to the CUDA
// kernel, and leaves the CPU graph of the same op alone; the shipped selection tables apply
// on the device they were tuned on only. Skips without a GPU.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randn.h>

#include "support.h"

namespace native_ops {
namespace {

using c10::DispatchKey;

TEST(CudaRouting, RoutesAtTheCudaKeyOnly) {
  if (!at::globalContext().hasCUDA()) {
    GTEST_SKIP() << "no CUDA device in this process (CPU-only machine): the CUDA key cannot run here";
  }
  testing::register_test_dsls();
  const std::string id = register_op_override<at::_ops::mul_Tensor>(
      "alpha", DispatchKey::CUDA,
      [](const at::Tensor& a, const at::Tensor&) { return a.is_cuda() && a.numel() == 1024; },
      [](const at::Tensor& a, const at::Tensor& b) { return call_original<at::_ops::mul_Tensor>(a, b) + 1; });
  init();
  const at::Tensor a = at::rand({1024}, at::kCUDA);
  const at::Tensor b = at::rand({1024}, at::kCUDA);
  const at::Tensor expected = (a.cpu() * b.cpu()) + 1;  // CPU mul has no router
  const at::Tensor routed = at::mul(a, b);
  EXPECT_TRUE(routed.is_cuda());
  EXPECT_TRUE(testing::close(routed.cpu(), expected));
  EXPECT_EQ(testing::hits(id), 1u);

  const at::Tensor c = at::rand({7}, at::kCUDA);
  EXPECT_TRUE(testing::close(at::mul(c, c).cpu(), c.cpu() * c.cpu()));
  EXPECT_EQ(testing::fallthroughs("mul.Tensor", DispatchKey::CUDA), 1u);
  EXPECT_EQ(testing::hits(id), 1u);
}

// On the device a shipped table was tuned on, a call falls in one of its cells; elsewhere
// the table stays out and the call is routed in order.
TEST(CudaRouting, AShippedTableAppliesOnTheDeviceItWasTunedOnOnly) {
  if (!at::globalContext().hasCUDA()) {
    GTEST_SKIP() << "no CUDA device in this process (CPU-only machine): the CUDA key cannot run here";
  }
  init();
  const GraphInfo graph = testing::graph("_softmax", DispatchKey::CUDA);
  if (!graph.selection || !graph.selection->device) GTEST_SKIP() << "no tuned table ships for _softmax at CUDA";
  const at::Tensor x = at::randn({64, 4096}, at::kCUDA);
  const Explanation e = explain("_softmax", DispatchKey::CUDA, {x, int64_t{-1}, false});
  ASSERT_TRUE(e.selection.has_value());
  const std::optional<TunedDevice> device = loaded_cuda_device(0);
  ASSERT_TRUE(device.has_value()) << "CUDA runs, so the driver is loaded";
  const bool tuned_here =
      device->name == graph.selection->device->name && device->capability == graph.selection->device->capability;
  EXPECT_EQ(e.selection->applies, tuned_here) << e.selection->why;
  if (tuned_here) {
    EXPECT_EQ(e.selection->bucket.rfind("rows [", 0), 0u) << e.selection->bucket;
    const std::string fires = e.fires.value_or("aten");
    EXPECT_EQ(fires, e.selection->cell) << "the node the cell names accepts this contiguous float32 call";
    const uint64_t before =
        fires == "aten" ? testing::fallthroughs("_softmax", DispatchKey::CUDA) : testing::hits(fires);
    const at::Tensor y = at::_softmax(x, -1, false);
    EXPECT_EQ(fires == "aten" ? testing::fallthroughs("_softmax", DispatchKey::CUDA) : testing::hits(fires),
              before + 1);
    EXPECT_TRUE(testing::close(y.cpu(), at::_softmax(x.cpu(), -1, false)));
  } else {
    EXPECT_NE(e.selection->why.find("the table was tuned on"), std::string::npos) << e.selection->why;
  }
}

}  // namespace
}  // namespace native_ops
