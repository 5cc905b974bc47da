// The cuda DSL's built-in overrides beyond what the conformance sweep checks: they are
// unavailable with a reason where there is no GPU; they launch on the current stream and
// on the tensor's device; autograd routes the norms' backwards with the forward's statistics;
// layer norm's persistent kernel, which takes more rows than the sweep's samples have,
// matches aten; embedding backward adds an index outside its table to no row and gives
// the same bits twice; and init() leaves CUDA alone, so a forked child can use it. The shipped
// selection tables stay out (NATIVE_OPS_TUNED_TABLES=0): they may send these shapes to
// triton or aten, and the tests judge the cuda kernels.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_fused_rms_norm.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/embedding_dense_backward.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/native_layer_norm.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/autograd/autograd.h>

#include "native_ops/selection.h"
#include "support.h"
#include "topk/cuda_abi.h"

namespace native_ops {
namespace {

const bool kRegistrationOrder = setenv("NATIVE_OPS_TUNED_TABLES", "0", 1) == 0;

// Whether the cuda DSL can run here, decided without initialising CUDA (fork needs that).
bool cuda_dsl_available() {
  const Dsl* dsl = find_dsl("cuda");
  return dsl != nullptr && dsl->runtime_available();
}

TEST(CudaKernels, UnavailableWithAReasonWithoutAGpu) {
  ASSERT_TRUE(kRegistrationOrder);
  const std::optional<NodeInfo> node = find_node("bmm_cuda_0");
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->key, c10::DispatchKey::CUDA);
  if (cuda_dsl_available()) {
    EXPECT_EQ(node->state, NodeState::active);
  } else {
    EXPECT_EQ(node->state, NodeState::unavailable);
    EXPECT_NE(node->reason.find("dsl cuda is unavailable"), std::string::npos) << node->reason;
  }
}

TEST(CudaKernels, RunOnTheCurrentStream) {
  if (!cuda_dsl_available()) GTEST_SKIP() << find_dsl("cuda")->unavailable_reason();
  init();
  const auto* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  const c10::Stream side = guard->getStreamFromGlobalPool(c10::Device(c10::kCUDA, 0));
  const at::Tensor a = at::randn({4096, 4096}, at::kCUDA);
  guard->synchronizeDevice(0);  // `a` is ready before the side stream uses it
  at::Tensor input, output;
  {
    const c10::StreamGuard on_side(side);
    // A long matmul on the side stream writes the softmax's input: a kernel launched on
    // any other stream would read it before it is written.
    input = at::mm(a, a).narrow(0, 0, 256);
    const uint64_t before = testing::hits("_softmax_cuda_0");
    output = at::_softmax(input, -1, false);
    EXPECT_EQ(testing::hits("_softmax_cuda_0"), before + 1);
  }
  side.synchronize();
  EXPECT_TRUE(testing::close(output.cpu(), at::_softmax(input.cpu(), -1, false)));
}

TEST(CudaKernels, RunOnTheTensorsDevice) {
  if (!cuda_dsl_available()) GTEST_SKIP() << find_dsl("cuda")->unavailable_reason();
  if (c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->deviceCount() < 2)
    GTEST_SKIP() << "one GPU here: the second-device test needs two";
  init();
  const c10::Device second(c10::kCUDA, 1);
  const at::Tensor a = at::randn({16, 300, 1}, at::TensorOptions().device(second).dtype(at::kBFloat16));
  const at::Tensor b = at::randn({16, 1, 200}, at::TensorOptions().device(second).dtype(at::kBFloat16));
  const uint64_t before = testing::hits("bmm_cuda_0");
  const at::Tensor product = at::bmm(a, b);  // the current device stays cuda:0
  EXPECT_EQ(testing::hits("bmm_cuda_0"), before + 1);
  EXPECT_EQ(product.device(), second);
  EXPECT_TRUE(testing::close(product.cpu(), at::bmm(a.cpu().to(at::kFloat), b.cpu().to(at::kFloat)).to(at::kBFloat16)));
}

// The outer product's grid covers at most 65535 batch entries; its blocks loop over the
// rest. (The triton kernel's cond declines so many, so the op database's samples, which
// every GPU DSL shares, stay below.)
TEST(CudaKernels, OuterProductsOfMoreBatchEntriesThanAGridCovers) {
  if (!cuda_dsl_available()) GTEST_SKIP() << find_dsl("cuda")->unavailable_reason();
  init();
  const auto options = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  const at::Tensor a = at::randn({70001, 3, 1}, options);
  const at::Tensor b = at::randn({70001, 1, 24}, options);
  const uint64_t before = testing::hits("bmm_cuda_0");
  const at::Tensor product = at::bmm(a, b);
  EXPECT_EQ(testing::hits("bmm_cuda_0"), before + 1);
  EXPECT_TRUE(testing::close(product.cpu(), at::bmm(a.cpu().to(at::kFloat), b.cpu().to(at::kFloat)).to(at::kBFloat16)));
}

// Embedding backward sorts the indices in the kernels library, an index outside [0,
// num_weights) as a key after every row's: it adds to no row (aten's CUDA kernel leaves
// such an index undefined, so the sweep has none), and a repeat of the call, whose
// segments are summed in position order, gives the same bits.
TEST(CudaKernels, EmbeddingBackwardAddsIndicesOutsideTheTableToNoRow) {
  if (!cuda_dsl_available()) GTEST_SKIP() << find_dsl("cuda")->unavailable_reason();
  init();
  constexpr int64_t kWeights = 50257, kWidth = 2048, kCount = 6000;
  const auto options = at::TensorOptions().device(at::kCUDA);
  for (const auto index_dtype : {at::kLong, at::kInt}) {
    SCOPED_TRACE(c10::toString(index_dtype));
    const at::Tensor indices = at::randint(kWeights, {kCount}, options.dtype(index_dtype));
    indices.slice(0, 0, kCount, 7).fill_(kWeights + 3);
    indices.slice(0, 3, kCount, 11).fill_(-2);
    const at::Tensor grad = at::randn({kCount, kWidth}, options.dtype(at::kBFloat16));
    const uint64_t before = testing::hits("embedding_dense_backward_cuda_0");
    const at::Tensor first = at::embedding_dense_backward(grad, indices, kWeights, -1, false);
    const at::Tensor second = at::embedding_dense_backward(grad, indices, kWeights, -1, false);
    EXPECT_EQ(testing::hits("embedding_dense_backward_cuda_0"), before + 2);
    EXPECT_TRUE(at::equal(first, second));
    const at::Tensor host_indices = indices.cpu().to(at::kLong);
    const at::Tensor kept = host_indices.ge(0).logical_and(host_indices.lt(kWeights)).nonzero().squeeze(1);
    const at::Tensor reference =
        at::zeros({kWeights, kWidth}, at::kDouble)
            .index_add_(0, host_indices.index_select(0, kept), grad.cpu().to(at::kDouble).index_select(0, kept));
    EXPECT_TRUE(at::allclose(first.cpu().to(at::kDouble), reference, 1e-2, 1e-2))
        << (first.cpu().to(at::kDouble) - reference).abs().max().item<double>();
  }
}

// topk's plan for decode rows, read through the kernels library's entry point: a vocabulary
// row with k up to 256 runs a cluster a row, which keeps nothing in global memory, where the
// device runs clusters (sm_90 on) and the rows fit one wave of them (a denser sample where
// the row is wide and k large); 16-bit rows wider than 65536 at k 2-44 and rows past the
// SMs (or past one wave at k 2-180) split over blocks whose selections the workspace holds;
// rows that fill the device take a block each and no workspace.
TEST(CudaKernels, TopkDecodeRowsTakeAClusterWithoutWorkspace) {
  if (!cuda_dsl_available()) GTEST_SKIP() << find_dsl("cuda")->unavailable_reason();
  init();
  at::randn({1}, at::kCUDA);  // the driver loaded, for loaded_cuda_device
  const std::optional<TunedDevice> device = loaded_cuda_device(0);
  ASSERT_TRUE(device.has_value());
  void* kernels = dlopen(NATIVE_OPS_CUDA_KERNELS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(kernels, nullptr) << dlerror();
  const auto workspace = reinterpret_cast<NativeOpsTopkWorkspaceFn>(dlsym(kernels, NATIVE_OPS_TOPK_WORKSPACE_SYMBOL));
  ASSERT_NE(workspace, nullptr);
  const auto bytes = [&](int dtype, int64_t rows, int64_t width, int64_t k, int largest = 1) {
    int64_t result = -1;
    EXPECT_EQ(workspace(dtype, largest, rows, width, k, &result), 0) << rows << "x" << width << " k " << k;
    return result;
  };
  // The library's sm_90 code runs on compute capability 9.x only; other GPUs run its PTX,
  // which takes no cluster (runs_sm90_code(), dsls/cuda/common.cuh).
  const bool clusters = std::stoi(device->capability) == 9;
  for (const int dtype : {kNativeOpsBFloat16, kNativeOpsFloat32}) {
    SCOPED_TRACE(dtype);
    EXPECT_EQ(bytes(dtype, 1, 50257, 256) == 0, clusters) << device->name << " " << device->capability;
    EXPECT_EQ(bytes(dtype, 8, 128256, 50) == 0, clusters);
    EXPECT_EQ(bytes(dtype, 1, 32000, 1) == 0, clusters);
    EXPECT_GT(bytes(dtype, 64, 50257, 256), 0);
    EXPECT_EQ(bytes(dtype, 4096, 50257, 256), 0);
  }
  EXPECT_GT(bytes(kNativeOpsBFloat16, 1, 128256, 32), 0);
  // k 1 a maximum (smallest: largest may run argmax's kernel, with no workspace either way).
  EXPECT_EQ(bytes(kNativeOpsBFloat16, 1, 128256, 1, /*largest=*/0) == 0, clusters);   // at every width
  EXPECT_EQ(bytes(kNativeOpsBFloat16, 16, 128256, 1, /*largest=*/0) == 0, clusters);  // a second wave
  EXPECT_EQ(bytes(kNativeOpsFloat32, 1, 262144, 1) == 0, clusters);                   // past the registers
  EXPECT_GT(bytes(kNativeOpsFloat32, 1, 262144, 50), 0);
  EXPECT_GT(bytes(kNativeOpsBFloat16, 16, 128256, 50), 0);
  EXPECT_EQ(bytes(kNativeOpsBFloat16, 2, 151936, 256) == 0, clusters);  // the denser sample
  EXPECT_EQ(bytes(kNativeOpsFloat32, 1, 128256, 32) == 0, clusters);
  // k 1 largest past the cluster is the arg-extreme kernel's, smallest the split's.
  EXPECT_EQ(bytes(kNativeOpsBFloat16, 64, 50257, 1), 0);
  EXPECT_GT(bytes(kNativeOpsBFloat16, 64, 50257, 1, /*largest=*/0), 0);
}

// A training step's RMS norm and layer norm: autograd calls the routed backward with the
// routed forward's statistics, on a side stream whose long matmul writes the input (the
// backward's column-gradient partials are a workspace taken on that stream too).
TEST(CudaKernels, NormBackwardsRouteUnderAutogradOnASideStream) {
  if (!cuda_dsl_available()) GTEST_SKIP() << find_dsl("cuda")->unavailable_reason();
  init();
  const auto* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  const c10::Stream side = guard->getStreamFromGlobalPool(c10::Device(c10::kCUDA, 0));
  const auto options = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  const at::Tensor a = at::randn({4096, 4096}, options);
  const at::Tensor weight = (at::rand({4096}, options) + 0.5).requires_grad_(true);
  const at::Tensor bias = at::randn({4096}, options).requires_grad_(true);
  const at::Tensor grad = at::randn({512, 4096}, options);
  guard->synchronizeDevice(0);
  for (const bool layer : {false, true}) {
    SCOPED_TRACE(layer ? "layer norm" : "RMS norm");
    const std::string forward_op = layer ? "native_layer_norm" : "_fused_rms_norm";
    const std::string backward_op = forward_op + "_backward";
    auto step = [&] {  // returns the gradients, flattened into one tensor
      const at::Tensor input = at::mm(a, a).narrow(0, 0, 512).div(64).detach().requires_grad_(true);
      if (!layer) {
        const at::Tensor output = std::get<0>(at::_fused_rms_norm(input, {4096}, weight, 1e-6));
        const auto grads = torch::autograd::grad({output}, {input, weight}, {grad});
        return at::cat({grads[0].flatten(), grads[1]});
      }
      const at::Tensor output = std::get<0>(at::native_layer_norm(input, {4096}, weight, bias, 1e-5));
      const auto grads = torch::autograd::grad({output}, {input, weight, bias}, {grad});
      return at::cat({grads[0].flatten(), grads[1], grads[2]});
    };
    at::Tensor routed;
    {
      const c10::StreamGuard on_side(side);
      const uint64_t forward = testing::hits(forward_op + "_cuda_0");
      const uint64_t backward = testing::hits(backward_op + "_cuda_0");
      routed = step();
      EXPECT_EQ(testing::hits(forward_op + "_cuda_0"), forward + 1);
      EXPECT_EQ(testing::hits(backward_op + "_cuda_0"), backward + 1);
    }
    side.synchronize();
    const at::Tensor reference =
        testing::aten_reference(backward_op, [&] { return testing::aten_reference(forward_op, step); });
    // bf16 outputs; the column gradients sum 512 rows in another order than aten's
    EXPECT_TRUE(at::allclose(routed.to(at::kFloat), reference.to(at::kFloat), 2e-2, 1e-2))
        << (routed.to(at::kFloat) - reference.to(at::kFloat)).abs().max().item<float>();
  }
}

// Layer norm of many rows of 65536 columns takes persistent clusters that stream the rows
// through shared memory (sm_90; elsewhere the other holders): on a side stream, whose
// kernel writes the input just before, every row matches aten, the grid's last, ragged
// round of rows included, and so do the mean and rstd.
TEST(CudaKernels, LayerNormOfManyWideRowsMatchesAtenOnASideStream) {
  if (!cuda_dsl_available()) GTEST_SKIP() << find_dsl("cuda")->unavailable_reason();
  init();
  const auto* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  const c10::Stream side = guard->getStreamFromGlobalPool(c10::Device(c10::kCUDA, 0));
  constexpr int64_t kWidth = 65536;
  constexpr int64_t kRows = 1027;  // at least 8 a row group of any grid that fits on one GPU
  for (const c10::ScalarType dtype : {at::kBFloat16, at::kFloat}) {
    const auto options = at::TensorOptions().device(at::kCUDA).dtype(dtype);
    const at::Tensor base = at::randn({kRows, kWidth}, options);
    const at::Tensor weight = at::rand({kWidth}, options) + 0.5;
    const at::Tensor bias = at::randn({kWidth}, options);
    guard->synchronizeDevice(0);
    auto run = [&](const at::Tensor& input) {
      const auto [y, mean, rstd] = at::native_layer_norm(input, {kWidth}, weight, bias, 1e-5);
      return std::vector<at::Tensor>{y, mean, rstd};
    };
    at::Tensor input;
    std::vector<at::Tensor> routed;
    {
      const c10::StreamGuard on_side(side);
      input = base.mul(2).add_(3);  // rows away from zero: the mean matters
      const uint64_t before = testing::hits("native_layer_norm_cuda_0");
      routed = run(input);
      EXPECT_EQ(testing::hits("native_layer_norm_cuda_0"), before + 1);
    }
    side.synchronize();
    for (size_t k = 0; k < routed.size(); ++k) {
      const at::Tensor reference = testing::aten_reference("native_layer_norm", [&] { return run(input)[k]; });
      EXPECT_TRUE(testing::close(routed[k].cpu(), reference.cpu())) << dtype << ", output " << k;
    }
  }
}

// The persistent kernel hands out rows through a counter in each call's workspace: two
// launches that share the GPU at once must each process all of their own rows.
TEST(CudaKernels, LayerNormsOfManyWideRowsOnTwoStreamsAtOnceMatchAten) {
  if (!cuda_dsl_available()) GTEST_SKIP() << find_dsl("cuda")->unavailable_reason();
  init();
  const auto* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  constexpr int64_t kWidth = 65536;
  const auto options = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  const at::Tensor weight = at::rand({kWidth}, options) + 0.5;
  const at::Tensor bias = at::randn({kWidth}, options);
  const std::vector<int64_t> row_counts{1027, 2050};
  std::vector<at::Tensor> inputs;
  for (const int64_t rows : row_counts) {
    inputs.push_back(at::randn({rows, kWidth}, options).add_(static_cast<double>(inputs.size() + 2)));
  }
  guard->synchronizeDevice(0);
  std::vector<c10::Stream> streams;
  for (size_t i = 0; i < inputs.size(); ++i) {
    streams.push_back(guard->getStreamFromGlobalPool(c10::Device(c10::kCUDA, 0)));
  }
  ASSERT_NE(streams[0], streams[1]);
  constexpr int kRounds = 3;  // queued back to back on both streams, without waiting between
  std::vector<std::vector<at::Tensor>> outputs(inputs.size());
  const uint64_t before = testing::hits("native_layer_norm_cuda_0");
  for (int round = 0; round < kRounds; ++round) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const c10::StreamGuard on(streams[i]);
      outputs[i].push_back(std::get<0>(at::native_layer_norm(inputs[i], {kWidth}, weight, bias, 1e-5)));
    }
  }
  for (const c10::Stream& stream : streams) stream.synchronize();
  EXPECT_EQ(testing::hits("native_layer_norm_cuda_0"), before + kRounds * inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto layer_norm = [&] { return std::get<0>(at::native_layer_norm(inputs[i], {kWidth}, weight, bias, 1e-5)); };
    const at::Tensor reference = testing::aten_reference("native_layer_norm", layer_norm);
    for (const at::Tensor& output : outputs[i]) {
      EXPECT_TRUE(testing::close(output.cpu(), reference.cpu())) << row_counts[i] << " rows";
    }
  }
}

TEST(CudaKernels, AForkedChildRunsThemAfterTheParentInitialised) {
  if (!cuda_dsl_available()) GTEST_SKIP() << find_dsl("cuda")->unavailable_reason();
  init();  // upstream's test_lazy_init: initialisation must not have touched CUDA
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    int code = 1;
    try {
      const at::Tensor x = at::randn({64, 4096}, at::kCUDA);
      const at::Tensor y = at::_softmax(x, -1, false);
      const bool fired = testing::hits("_softmax_cuda_0") == 1;
      const bool right = at::allclose(y.cpu(), at::_softmax(x.cpu(), -1, false), 1.3e-6, 1e-5);
      code = fired && right ? 0 : 2;
    } catch (...) {
      code = 3;
    }
    _exit(code);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: did not finish, 2: wrong or not routed, 3: threw";
}

}  // namespace
}  // namespace native_ops
