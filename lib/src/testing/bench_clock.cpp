// Device clocks for benchmarks. The CUDA clock goes through c10's device-generic Event
// and Stream, so this library needs no CUDA headers and touches CUDA only when asked to.
#include "testing/bench_clock.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <vector>

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros.h>
#include <c10/core/Event.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "native_ops/error.h"
#include "native_ops/selection.h"

namespace native_ops::detail {

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

class CpuClock final : public BenchClock {
 public:
  double time_per_call(const std::function<void()>& fn, size_t calls) override {
    const auto start = Clock::now();
    for (size_t i = 0; i < calls; ++i) fn();
    return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / calls;
  }
  size_t calls_per_round(double ns_per_call) const override {
    constexpr double kRoundNs = 200e3;  // far above the clock's resolution and call overhead
    return std::clamp<size_t>(static_cast<size_t>(kRoundNs / std::max(ns_per_call, 1.0)) + 1, 1, 100000);
  }
  std::string device_name() const override { return cpu_model(); }
  c10::Device device() const override { return c10::Device(c10::kCPU); }
};

class GpuClock final : public BenchClock {
 public:
  explicit GpuClock(c10::Device device)
      : device_(device),
        guard_(c10::impl::getDeviceGuardImpl(device.type())),
        // Larger than the L2 of any current GPU (H200: 60 MB), so each flush evicts it all;
        // read, not written, so that the lines it leaves are clean: no write-back of the
        // flush lands in the timed call.
        flush_(at::zeros({int64_t{64} << 20}, at::TensorOptions().dtype(at::kFloat).device(device))),
        flush_sum_(at::empty({}, flush_.options())) {}

  double time_per_call(const std::function<void()>& fn, size_t calls) override {
    const c10::Stream stream = guard_->getStream(device_);
    at::sum_out(flush_sum_, flush_);
    c10::Event start(device_.type(), c10::EventFlag::BACKEND_DEFAULT);  // timing enabled
    c10::Event stop(device_.type(), c10::EventFlag::BACKEND_DEFAULT);
    start.record(stream);
    for (size_t i = 0; i < calls; ++i) fn();
    stop.record(stream);
    stop.synchronize();
    return start.elapsedTime(stop) * 1e6 / calls;  // ms to ns
  }
  size_t calls_per_round(double) const override { return 1; }
  void synchronize() override { guard_->synchronizeDevice(device_.index()); }
  std::string device_name() const override {
    const std::vector<std::string> models = nvidia_gpu_models();
    return models.empty() ? "NVIDIA GPU" : models.front();
  }
  c10::Device device() const override { return device_; }

 private:
  c10::Device device_;
  const c10::impl::DeviceGuardImplInterface* guard_;
  at::Tensor flush_;
  at::Tensor flush_sum_;
};

}  // namespace

double BenchClock::host_time_per_call(const std::function<void()>& fn, size_t calls) {
  synchronize();
  const auto start = Clock::now();
  for (size_t i = 0; i < calls; ++i) fn();
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count() / calls;
  synchronize();
  return ns;
}

double BenchClock::copy_gbps() {
  constexpr int64_t kFloats = int64_t{64} << 20;  // 256 MiB each way: far beyond any cache
  const at::Tensor source = at::ones({kFloats}, at::TensorOptions().dtype(at::kFloat).device(device()));
  at::Tensor destination = at::empty_like(source);
  auto copy = [&] { destination.copy_(source); };
  time_per_call(copy, 1);  // warm-up: first touch of the pages
  std::vector<double> ns;
  for (int i = 0; i < 9; ++i) ns.push_back(time_per_call(copy, 1));
  return 2.0 * kFloats * sizeof(float) / median(ns);  // bytes per ns = GB/s
}

std::unique_ptr<BenchClock> BenchClock::for_device(c10::Device device) {
  if (device.is_cpu()) return std::make_unique<CpuClock>();
  if (device.is_cuda()) {
    if (!at::hasCUDA()) throw Error("cannot benchmark on " + device.str() + ": this process sees no CUDA device");
    return std::make_unique<GpuClock>(device);
  }
  throw Error("cannot benchmark on " + device.str() + ": only cpu and cuda have a clock");
}

}  // namespace native_ops::detail
