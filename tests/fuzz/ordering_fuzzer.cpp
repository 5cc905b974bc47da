// libFuzzer target: ordering functions. The input scripts what the function returns for
// each graph (a permutation, nodes left out, a node twice, a node of another graph, a node
// no graph has) or what it throws (a std::exception, an int). reregister_overrides() must
// apply each valid order exactly and leave each graph whose order it refuses as it was,
// with one error per refused graph; anything else aborts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "native_ops/native_ops.h"

namespace {

using native_ops::Graph;
using native_ops::NodeInfo;

// Graphs of several nodes to order, besides the built-ins' graphs of one.
void register_nodes() {
  native_ops::register_dsl(native_ops::make_compiled_in_dsl("fuzz", "1"));
  native_ops::Options several;
  several.allow_multiple_override = true;
  for (int i = 0; i < 4; ++i) {
    native_ops::register_op_override<at::_ops::mul_Tensor>(
        "fuzz", c10::DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) { return false; },
        [](const at::Tensor& a, const at::Tensor& b) { return a; }, several);
  }
  for (int i = 0; i < 2; ++i) {
    native_ops::register_op_override<at::_ops::neg>(
        "fuzz", c10::DispatchKey::CPU, [](const at::Tensor&) { return false; }, [](const at::Tensor& a) { return a; },
        several);
  }
  native_ops::init();
}

std::string graph_name(const std::string& op, c10::DispatchKey key) { return op + "@" + c10::toString(key); }

std::map<std::string, std::vector<std::string>> active_orders() {
  std::map<std::string, std::vector<std::string>> orders;
  for (const native_ops::GraphInfo& graph : native_ops::graphs()) {
    std::vector<std::string>& order = orders[graph_name(graph.op_symbol, graph.key)];
    for (const NodeInfo& node : graph.nodes) {
      if (node.state == native_ops::NodeState::active) order.push_back(node.id);
    }
  }
  return orders;
}

void check(bool holds, const char* what) {
  if (!holds) {
    std::fprintf(stderr, "ordering_fuzzer: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool registered = (register_nodes(), true);
  (void)registered;
  static std::vector<NodeInfo> every_node;
  if (every_node.empty()) {
    for (const native_ops::GraphInfo& graph : native_ops::graphs()) {
      every_node.insert(every_node.end(), graph.nodes.begin(), graph.nodes.end());
    }
  }
  size_t next = 0;
  const auto byte = [&]() -> uint8_t { return next < size ? data[next++] : 0; };
  std::map<std::string, std::vector<std::string>> expected;  // graphs given a valid order
  std::set<std::string> refused;
  native_ops::set_ordering_function([&](const std::string& op, c10::DispatchKey key, const Graph& graph) -> Graph {
    const std::string name = graph_name(op, key);
    const uint8_t head = byte();
    if (head % 16 == 15) {
      refused.insert(name);
      throw 42;
    }
    if (head % 16 == 14) {
      refused.insert(name);
      throw std::runtime_error("fuzz");
    }
    Graph order;
    std::set<std::string> seen;
    bool valid = true;
    for (size_t n = head % 8; n > 0; --n) {
      const size_t pick = byte() % (graph.size() + 2);
      NodeInfo node;
      if (pick < graph.size()) {
        node = graph[pick];
      } else if (pick == graph.size()) {
        node = every_node[byte() % every_node.size()];
      } else {
        node = graph.front();
        node.id = "no_such_node_" + std::to_string(byte());
      }
      const bool ours = std::any_of(graph.begin(), graph.end(), [&](const NodeInfo& g) { return g.id == node.id; });
      valid = valid && ours && seen.insert(node.id).second;
      order.push_back(node);
    }
    if (valid) {
      std::vector<std::string>& ids = expected[name];
      for (const NodeInfo& node : order) {
        const bool can_run =
            node.state != native_ops::NodeState::unavailable && node.state != native_ops::NodeState::disabled;
        if (can_run) ids.push_back(node.id);  // the others are kept in the order, never active
      }
    } else {
      refused.insert(name);
    }
    return order;
  });
  const std::map<std::string, std::vector<std::string>> before = active_orders();
  const native_ops::OrderingReport report = native_ops::reregister_overrides();
  const std::map<std::string, std::vector<std::string>> after = active_orders();
  check(report.errors.size() == refused.size(), "one error per refused graph");
  for (const auto& [name, order] : after) {
    const auto valid = expected.find(name);
    if (valid != expected.end()) {
      check(order == valid->second, "a valid order was not applied exactly");
    } else {
      check(order == before.at(name), "a refused graph (or one the function was not asked about) changed");
    }
  }
  native_ops::set_ordering_function({});
  return 0;
}
