// Routing at the CUDA key: the router reaches CUDA tensors, falls through to the CUDA
// kernel, and leaves the CPU graph of the same op alone. Skips without a GPU.
#include <ATen/ATen.h>

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

}  // namespace
}  // namespace native_ops
