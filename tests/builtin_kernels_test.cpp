// Each built-in override against aten, on its cond's domain (hits counted, values within
// the dtype's assert_close tolerance) and just outside it (the cond declines).
#include <limits>

#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>

#include "native_ops/node_access.h"
#include "native_ops/testing/op_db.h"
#include "support.h"

namespace native_ops {
namespace {

using testing::close;
using testing::hits;

class BuiltinKernels : public ::testing::Test {
 protected:
  void SetUp() override { init(); }

  // Runs `op` routed and with the override off; expects a hit and close values.
  void expect_routed_close(const std::string& op_symbol, const std::string& node,
                           const std::function<at::Tensor()>& op) {
    const uint64_t before = hits(node);
    const at::Tensor routed = op();
    EXPECT_EQ(hits(node), before + 1) << node << " did not fire";
    const at::Tensor reference = testing::aten_reference(op_symbol, op);
    EXPECT_TRUE(close(routed, reference)) << node;
  }
  // Runs `op` routed; expects no hit and the aten result.
  void expect_declined(const std::string& op_symbol, const std::string& node, const std::function<at::Tensor()>& op) {
    const uint64_t before = hits(node);
    const at::Tensor routed = op();
    EXPECT_EQ(hits(node), before) << node << " fired outside its domain";
    EXPECT_TRUE(testing::identical(routed, testing::aten_reference(op_symbol, op)));
  }
};

TEST_F(BuiltinKernels, BmmOuterProductMatchesAten) {
  struct Shape {
    int64_t batches, rows, cols;
  };
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    for (const Shape s : {Shape{1, 1, 1}, Shape{3, 5, 7}, Shape{2, 1, 33}, Shape{64, 1024, 32}, Shape{16, 256, 512},
                          Shape{2, 4096, 2048}}) {  // the last: exactly 2^24 outputs
      const at::Tensor a = at::randn({s.batches, s.rows, 1}, dtype);
      const at::Tensor m = at::randn({s.batches, 1, s.cols}, dtype);
      expect_routed_close("bmm", "bmm_cpp_0", [&] { return at::bmm(a, m); });
    }
  }
  // Strided inputs: a transposed view, a batch-broadcast (stride 0) mat2.
  const at::Tensor a_t = at::randn({1, 6, 4}).transpose(0, 1).narrow(2, 0, 1);
  const at::Tensor m_expanded = at::randn({1, 1, 9}).expand({6, 1, 9});
  expect_routed_close("bmm", "bmm_cpp_0", [&] { return at::bmm(a_t, m_expanded); });
  // Extreme values stay exact products.
  const at::Tensor big = at::full({2, 3, 1}, 3e38f);
  const at::Tensor special = at::tensor({std::numeric_limits<float>::infinity(), 0.0f, NAN, -2.0f}).view({1, 1, 4});
  expect_routed_close("bmm", "bmm_cpp_0", [&] { return at::bmm(big.narrow(0, 0, 1), special); });
}

TEST_F(BuiltinKernels, BmmDeclinesOutsideTheOuterProduct) {
  const std::vector<std::pair<at::Tensor, at::Tensor>> cases = {
      {at::randn({2, 3, 2}), at::randn({2, 2, 4})},                                // K == 2
      {at::randint(0, 9, {2, 3, 1}), at::randint(0, 9, {2, 1, 4})},                // integers
      {at::randn({2, 3, 1}, at::kBFloat16), at::randn({2, 1, 4}, at::kBFloat16)},  // bf16
      {at::randn({2, 3, 1}), at::randn({2, 1, 8}).slice(2, 0, 8, 2)},              // strided rows
      {at::randn({0, 3, 1}), at::randn({0, 1, 4})},                                // empty
      {at::randn({2, 4096, 1}), at::randn({2, 1, 4097})},                          // over 2^24 outputs
      {at::randn({2, 513, 1}), at::randn({2, 1, 31})},                             // many narrow rows
  };
  for (const auto& [a, m] : cases) {
    expect_declined("bmm", "bmm_cpp_0", [&] { return at::bmm(a, m); });
  }
}

TEST_F(BuiltinKernels, SoftmaxLastDimMatchesAten) {
  // The cond takes 65536 elements or more; odd widths exercise the partial-vector tails.
  for (const int64_t width : {1, 7, 16, 17, 100, 1000, 4096, 32000, 70000}) {
    const int64_t rows = (65536 + width - 1) / width;
    for (const int64_t extra_rows : {0, 5}) {
      const at::Tensor x = at::randn({rows + extra_rows, width}) * 10;
      expect_routed_close("_softmax", "_softmax_cpp_0", [&] { return at::_softmax(x, -1, false); });
    }
  }
  const at::Tensor x3 = at::randn({64, 32, 33});
  expect_routed_close("_softmax", "_softmax_cpp_0", [&] { return at::_softmax(x3, 2, false); });
  const at::Tensor x1 = at::randn({70000});
  expect_routed_close("_softmax", "_softmax_cpp_0", [&] { return at::_softmax(x1, 0, false); });
}

TEST_F(BuiltinKernels, SoftmaxHandlesExtremeValuesLikeAten) {
  const float inf = std::numeric_limits<float>::infinity();
  // Five special rows, repeated to reach the cond's minimum size.
  const at::Tensor x =
      at::tensor({
                     -inf,  0.0f,   1.0f,  -inf,   2.0f,  3.0f,  4.0f,  5.0f,  6.0f,  7.0f,  8.0f,  9.0f,  10.0f,
                     11.0f, 12.0f,  13.0f, 14.0f,  // masked
                     -inf,  -inf,   -inf,  -inf,   -inf,  -inf,  -inf,  -inf,  -inf,  -inf,  -inf,  -inf,  -inf,
                     -inf,  -inf,   -inf,  -inf,  // all masked
                     1e30f, -1e30f, 88.0f, -88.0f, 0.0f,  1.0f,  2.0f,  3.0f,  4.0f,  5.0f,  6.0f,  7.0f,  8.0f,
                     9.0f,  10.0f,  11.0f, 12.0f,  NAN,   0.0f,  1.0f,  2.0f,  3.0f,  4.0f,  5.0f,  6.0f,  7.0f,
                     8.0f,  9.0f,   10.0f, 11.0f,  12.0f, 13.0f, 14.0f, 15.0f, inf,   0.0f,  1.0f,  2.0f,  3.0f,
                     4.0f,  5.0f,   6.0f,  7.0f,   8.0f,  9.0f,  10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f,
                 })
          .view({5, 17})
          .repeat({800, 1});
  expect_routed_close("_softmax", "_softmax_cpp_0", [&] { return at::_softmax(x, -1, false); });
}

TEST_F(BuiltinKernels, SoftmaxDeclinesOutsideItsDomain) {
  const at::Tensor x = at::randn({256, 256});
  const at::Tensor x64 = at::randn({256, 256}, at::kDouble);
  const at::Tensor transposed = at::randn({256, 256}).t();
  const at::Tensor small = at::randn({16, 1024});  // where aten is as fast
  const at::Tensor empty = at::randn({0, 4});
  expect_declined("_softmax", "_softmax_cpp_0", [&] { return at::_softmax(x, 0, false); });
  expect_declined("_softmax", "_softmax_cpp_0", [&] { return at::_softmax(x64, -1, false); });
  expect_declined("_softmax", "_softmax_cpp_0", [&] { return at::_softmax(transposed, -1, false); });
  expect_declined("_softmax", "_softmax_cpp_0", [&] { return at::_softmax(small, -1, false); });
  expect_declined("_softmax", "_softmax_cpp_0", [&] { return at::_softmax(empty, -1, false); });
}

TEST_F(BuiltinKernels, AddInPlaceMatchesAten) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    for (const int64_t n : {1, 15, 1000, 1 << 20}) {
      for (const double alpha : {1.0, 2.5, -1.0}) {
        const at::Tensor x = at::randn({n}, dtype);
        const at::Tensor y = at::randn({n}, dtype);
        expect_routed_close("add_.Tensor", "add__Tensor_cpp_0", [&] { return x.clone().add_(y, alpha); });
      }
    }
  }
  const at::Tensor x = at::randn({3, 4, 5});
  expect_routed_close("add_.Tensor", "add__Tensor_cpp_0", [&] { return x.clone().add_(x, 3); });  // integer alpha
  expect_routed_close("add_.Tensor", "add__Tensor_cpp_0", [&] {
    at::Tensor self = x.clone();
    return self.add_(self, 0.5);  // self aliases other
  });
}

TEST_F(BuiltinKernels, AddInPlaceDeclinesOutsideItsDomain) {
  const std::vector<std::pair<at::Tensor, at::Tensor>> cases = {
      {at::randn({4, 5}), at::randn({5})},               // broadcast
      {at::randn({4}), at::randn({4}, at::kDouble)},     // mixed dtypes
      {at::randint(0, 9, {4}), at::randint(0, 9, {4})},  // integers
      {at::randn({5, 4}).t(), at::randn({4, 5})},        // non-contiguous self
  };
  for (const auto& [self, other] : cases) {
    expect_declined("add_.Tensor", "add__Tensor_cpp_0", [&] { return self.clone().add_(other); });
  }
  // Partial overlap: the cond declines, and aten refuses the call as it does without us.
  at::Tensor base = at::randn({8});
  EXPECT_THROW(base.narrow(0, 0, 6).add_(base.narrow(0, 2, 6)), c10::Error);
  EXPECT_EQ(hits("add__Tensor_cpp_0"), 0u);
}

// The padded mm override runs at the CUDA key; its cond reads dtypes, sizes and strides
// only, so CPU tensors of the same layouts judge it here.
TEST_F(BuiltinKernels, PaddedMmAcceptsOnlyCallsCublasRunsUnaligned) {
  const NodeHandle node = find_node_handle("mm_cpp_0");
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16);
  const auto accepted = [&](const at::Tensor& a, const at::Tensor& b) {
    const CondDecision decision = check_node(node, {a, b});
    EXPECT_TRUE(decision.accepted) << decision.reason;
  };
  const auto declined = [&](const at::Tensor& a, const at::Tensor& b, const std::string& why) {
    const CondDecision decision = check_node(node, {a, b});
    EXPECT_FALSE(decision.accepted);
    EXPECT_NE(decision.reason.find(why), std::string::npos) << decision.reason;
  };
  const at::Tensor x = at::empty({1024, 2048}, bf16);
  const at::Tensor odd_weight = at::empty({4001, 2048}, bf16);
  accepted(x, odd_weight.t());                                             // x @ W.t(), n odd
  accepted(at::empty({1024, 4001}, bf16), at::empty({4001, 1024}, bf16));  // k odd along self's rows
  accepted(at::empty({4001, 1025}, bf16).narrow(1, 0, 1024).t(), at::empty({4001, 1024}, bf16));  // odd leading dim
  declined(at::empty({1024, 1024}, bf16), at::empty({1024, 1024}, bf16), "aligned as it lies");
  // k odd, but both operands stride across it with aligned leading dimensions.
  declined(at::empty({4001, 1024}, bf16).t(), at::empty({4001, 1024}, bf16), "aligned as it lies");
  declined(at::empty({8, 2048}, bf16), odd_weight.t(), "under 10^9 flops");  // a decode step
  // 1.07e9 flops: enough for the two copies an odd n takes, not for the four of an odd k.
  accepted(at::empty({1024, 4096}, bf16), at::empty({4096, 127}, bf16));
  declined(at::empty({1024, 127}, bf16), at::empty({127, 4096}, bf16), "a copy launched");
  declined(at::empty({64, 8192}, bf16), at::empty({4001, 8192}, bf16).t(), "under 512 flops an element copied");
  declined(x.to(at::kFloat), odd_weight.to(at::kFloat).t(), "not bfloat16 or float16");
}

// Its op database samples (made on the CPU here: the cond reads layouts only) are meant for
// it exactly where the cond accepts them, as the GPU sweep checks on the H200.
TEST_F(BuiltinKernels, PaddedMmCondAcceptsExactlyTheSamplesMeantForIt) {
  const NodeHandle node = find_node_handle("mm_cpp_0");
  const std::vector<OpEntry> entries = op_entries_for("mm", "cpp");
  ASSERT_EQ(entries.size(), 1u);
  size_t meant = 0;
  for (const auto dtype : entries[0].dtypes) {
    for (const Sample& sample : entries[0].samples(c10::Device(c10::kCPU), dtype)) {
      const bool meant_for = !sample.meant_for.empty();
      meant += meant_for;
      const CondDecision decision = check_node(node, sample.arguments);
      EXPECT_EQ(decision.accepted, meant_for)
          << dtype_name(dtype) << " " << sample.description << ": " << decision.reason;
    }
  }
  EXPECT_GT(meant, 0u);
}

}  // namespace
}  // namespace native_ops
