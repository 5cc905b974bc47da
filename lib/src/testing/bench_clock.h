#pragma once
// Timing one batch of calls on one device: a steady clock on the CPU; device events
// around the calls on a GPU, after evicting the L2 cache.

#include <functional>
#include <memory>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace native_ops::detail {

class BenchClock {
 public:
  virtual ~BenchClock() = default;
  /// Nanoseconds per call of `calls` back-to-back calls of `fn`, as the device sees them.
  virtual double time_per_call(const std::function<void()>& fn, size_t calls) = 0;
  /// Nanoseconds per call on the host, for launches that return before the device is done.
  double host_time_per_call(const std::function<void()>& fn, size_t calls);
  /// Calls per round: enough for the clock's resolution (CPU), one per flush (GPU).
  virtual size_t calls_per_round(double ns_per_call) const = 0;
  /// Waits until the device has run everything queued.
  virtual void synchronize() {}
  /// Read + write bandwidth of a large device-to-device copy, GB/s (median of several).
  double copy_gbps();
  virtual std::string device_name() const = 0;
  virtual c10::Device device() const = 0;

  /// The clock for `device`: CPU or CUDA.
  static std::unique_ptr<BenchClock> for_device(c10::Device device);
};

}  // namespace native_ops::detail
