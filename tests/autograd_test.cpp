// Routers sit below Autograd and ADInplaceOrView: gradients and version counters of
// routed ops stay correct, also where a backward formula calls the routed op itself.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/sum.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/variable.h>

#include "support.h"

namespace native_ops {
namespace {

using testing::close;
using testing::hits;

TEST(Autograd, AnInPlaceOverrideKeepsIdentityStorageAndVersion) {
  init();
  at::Tensor x = at::rand({1000});
  const at::Tensor y = at::rand({1000});
  const at::Tensor expected = testing::aten_reference("add_.Tensor", [&] { return x.clone().add_(y); });
  const void* storage = x.data_ptr();
  const auto version = x._version();
  at::Tensor& result = x.add_(y);
  EXPECT_EQ(hits("add__Tensor_cpp_0"), 1u);
  EXPECT_TRUE(result.is_same(x));
  EXPECT_EQ(x.data_ptr(), storage);
  EXPECT_EQ(x._version(), version + 1);
  EXPECT_TRUE(close(x, expected));
}

TEST(Autograd, AnInPlaceOverrideOnANonLeafBackpropagates) {
  init();
  const at::Tensor leaf = at::rand({64}).set_requires_grad(true);
  at::Tensor inner = leaf * 3.0;
  inner.add_(at::rand({64}), 2.0);
  EXPECT_EQ(hits("add__Tensor_cpp_0"), 1u);
  at::sum(inner).backward();
  EXPECT_TRUE(close(leaf.grad(), at::full_like(leaf, 3.0)));
}

TEST(Autograd, BmmOuterProductGradientsIncludingARoutedBackwardBmm) {
  init();
  const int64_t batches = 3, rows = 1, cols = 5;  // rows == 1: backward's a^T @ grad has K == 1
  const at::Tensor a = at::rand({batches, rows, 1}, at::kDouble).set_requires_grad(true);
  const at::Tensor m = at::rand({batches, 1, cols}, at::kDouble).set_requires_grad(true);
  const at::Tensor out = at::bmm(a, m);
  EXPECT_EQ(hits("bmm_cpp_0"), 1u);
  const at::Tensor grad = at::rand({batches, rows, cols}, at::kDouble);
  out.backward(grad);
  EXPECT_EQ(hits("bmm_cpp_0"), 2u) << "backward's bmm with K == 1 must be routed too";

  const auto g = grad.accessor<double, 3>();
  const auto av = a.accessor<double, 3>();
  const auto mv = m.accessor<double, 3>();
  const auto ga = a.grad().accessor<double, 3>();
  const auto gm = m.grad().accessor<double, 3>();
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      double expected = 0;
      for (int64_t j = 0; j < cols; ++j) expected += g[b][i][j] * mv[b][0][j];
      EXPECT_NEAR(ga[b][i][0], expected, 1e-12);
    }
    for (int64_t j = 0; j < cols; ++j) {
      double expected = 0;
      for (int64_t i = 0; i < rows; ++i) expected += av[b][i][0] * g[b][i][j];
      EXPECT_NEAR(gm[b][0][j], expected, 1e-12);
    }
  }
}

TEST(Autograd, SoftmaxGradientMatchesAten) {
  init();
  const at::Tensor x = at::rand({2048, 33});  // 67584 elements: inside the cond's domain
  const at::Tensor grad = at::rand({2048, 33});
  const auto gradient_of = [&] {
    const at::Tensor leaf = x.clone().set_requires_grad(true);
    at::softmax(leaf, -1).backward(grad);
    return leaf.grad();
  };
  const at::Tensor routed = gradient_of();
  EXPECT_EQ(hits("_softmax_cpp_0"), 1u);
  const at::Tensor reference = testing::aten_reference("_softmax", gradient_of);
  EXPECT_EQ(hits("_softmax_cpp_0"), 1u);
  EXPECT_TRUE(close(routed, reference));
}

}  // namespace
}  // namespace native_ops
