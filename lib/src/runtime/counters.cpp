// Per-thread routing counters: written by their own thread without a lock-prefixed
// instruction, summed under a lock when read, folded into totals when the thread exits.
#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include "native_ops/detail/thread_routing.h"

namespace native_ops::detail {

__thread ThreadRouting tls_routing;

namespace {

using Row = std::atomic<uint64_t>;

struct CounterStore {
  std::mutex mutex;
  std::vector<CounterBlock*> live;
  std::vector<std::array<uint64_t, kSlotsPerRouter>> retired =
      std::vector<std::array<uint64_t, kSlotsPerRouter>>(kMaxRouters);
};

CounterStore& store() {
  static CounterStore* instance = new CounterStore;  // outlives every thread's exit
  return *instance;
}

void retire(CounterBlock* block) {
  CounterStore& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (uint32_t router = 0; router < kMaxRouters; ++router) {
    Row* row = block->rows[router];
    if (row == nullptr) continue;
    for (uint32_t slot = 0; slot < kSlotsPerRouter; ++slot) {
      s.retired[router][slot] += row[slot].load(std::memory_order_relaxed);
    }
    delete[] row;
  }
  s.live.erase(std::remove(s.live.begin(), s.live.end(), block), s.live.end());
  delete block;
}

// Owns this thread's block; its destructor runs at thread exit. Only the slow path
// touches it, so the hot path never pays for a thread_local with a destructor.
struct BlockOwner {
  CounterBlock* block = nullptr;
  ~BlockOwner() {
    if (block != nullptr) {
      tls_routing.counters = nullptr;
      retire(block);
    }
    exited = true;
  }
  bool exited = false;
};
thread_local BlockOwner block_owner;

}  // namespace

std::atomic<uint64_t>* counter_row_slow(uint32_t router) {
  ThreadRouting& t = tls_routing;
  if (block_owner.exited) {
    // A routed call from another thread_local's destructor: count nowhere.
    static Row discard[kSlotsPerRouter];
    return discard;
  }
  CounterStore& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (t.counters == nullptr) {
    t.counters = new CounterBlock{};
    block_owner.block = t.counters;
    s.live.push_back(t.counters);
  }
  Row*& row = t.counters->rows[router];
  if (row == nullptr) {
    row = new Row[kSlotsPerRouter]();
  }
  return row;
}

uint64_t counter_total(uint32_t router, uint32_t slot) {
  CounterStore& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  uint64_t total = s.retired[router][slot];
  for (const CounterBlock* block : s.live) {
    if (const Row* row = block->rows[router]) {
      total += row[slot].load(std::memory_order_relaxed);
    }
  }
  return total;
}

}  // namespace native_ops::detail
