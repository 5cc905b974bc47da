#pragma once
// Per-thread routing state: the re-entrancy bits, the innermost running override, and
// this thread's routing counters. Everything the router touches on a call is here, so a
// routed call costs one thread-local lookup and no atomic read-modify-write.

#include <atomic>
#include <cstdint>
#include "native_ops/export.h"

#include <c10/core/DispatchKeySet.h>

namespace native_ops::detail {

/// Routers per process; each (op, key) graph gets one index for its lifetime.
constexpr uint32_t kMaxRouters = 1024;
/// Counter slots per router: slot 0 counts fall-throughs, slot 1 + i counts hits of the
/// i-th node registered for that (op, key). Hence at most 63 overrides per (op, key).
constexpr uint32_t kSlotsPerRouter = 64;
constexpr uint32_t kFallthroughSlot = 0;

struct RouterState;

/// One running override impl on this thread (a stack, innermost first).
struct ActiveRoute {
  const RouterState* router;
  c10::DispatchKeySet keys;
  const ActiveRoute* outer;
};

/// This thread's counters: one row of kSlotsPerRouter per router it has routed through.
/// Rows are written by their thread only (load + store, no lock prefix) and read by
/// counter_total(); a block outlives its thread's exit in the retired totals.
struct CounterBlock {
  std::atomic<uint64_t>* rows[kMaxRouters];
};

struct ThreadRouting {
  const ActiveRoute* innermost;
  CounterBlock* counters;
  uint64_t active_bits[kMaxRouters / 64];
  uint32_t strict_depth;  // > 0: kernel failures reach the caller whatever the settings

  bool is_active(uint32_t router) const { return (active_bits[router >> 6] >> (router & 63)) & 1u; }
};

/// Zero-initialised and trivial. Declared with __thread rather than thread_local so that
/// callers in other libraries skip the check for a dynamic initialiser on every access.
extern NATIVE_OPS_API __thread ThreadRouting tls_routing;

/// Allocates this thread's counter row for `router` (once per thread and router).
NATIVE_OPS_API std::atomic<uint64_t>* counter_row_slow(uint32_t router);

inline void count(ThreadRouting& t, uint32_t router, uint32_t slot) {
  std::atomic<uint64_t>* row = t.counters ? t.counters->rows[router] : nullptr;
  if (__builtin_expect(row == nullptr, 0)) {
    row = counter_row_slow(router);
  }
  row[slot].store(row[slot].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

/// Moves one count of this thread from `from` to `to` (a hit that became a fall-through).
inline void recount(ThreadRouting& t, uint32_t router, uint32_t from, uint32_t to) {
  std::atomic<uint64_t>* row = t.counters->rows[router];  // count() made it
  row[from].store(row[from].load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  row[to].store(row[to].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

/// While one exists on a thread, kernel failures there reach the caller (faults.h): for
/// conformance sweeps and benchmarks, which must judge and time the override itself.
class StrictFailuresScope {
 public:
  StrictFailuresScope() { ++tls_routing.strict_depth; }
  ~StrictFailuresScope() { --tls_routing.strict_depth; }
  StrictFailuresScope(const StrictFailuresScope&) = delete;
  StrictFailuresScope& operator=(const StrictFailuresScope&) = delete;
};

/// Sum of one counter over every live thread and every thread that has exited.
NATIVE_OPS_API uint64_t counter_total(uint32_t router, uint32_t slot);

/// Marks `router` active on this thread while an override impl runs (re-entrancy guard)
/// and records the frame that call_original() reads.
class ActiveRouteScope {
 public:
  ActiveRouteScope(ThreadRouting& t, const RouterState& router, uint32_t index, c10::DispatchKeySet keys)
      : t_(t), frame_{&router, keys, t.innermost}, word_(index >> 6), bit_(uint64_t{1} << (index & 63)) {
    t_.innermost = &frame_;
    t_.active_bits[word_] |= bit_;
  }
  ~ActiveRouteScope() {
    t_.active_bits[word_] &= ~bit_;
    t_.innermost = frame_.outer;
  }
  ActiveRouteScope(const ActiveRouteScope&) = delete;
  ActiveRouteScope& operator=(const ActiveRouteScope&) = delete;

 private:
  ThreadRouting& t_;
  ActiveRoute frame_;
  uint32_t word_;
  uint64_t bit_;
};

}  // namespace native_ops::detail
