// The loadable module. Loading it into a process that runs libtorch 2.11, e.g. with
// torch.ops.load_library(path) from Python, calls native_ops::init() and adds
// torch.ops.native_ops.status(), which returns the graphs and their counters as JSON.
#include <iostream>

#include <nlohmann/json.hpp>
#include <torch/library.h>

#include "native_ops/native_ops.h"

namespace {

std::string status_json() {
  nlohmann::json graphs = nlohmann::json::array();
  for (const native_ops::GraphInfo& graph : native_ops::graphs()) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const native_ops::NodeInfo& node : graph.nodes) {
      nodes.push_back({{"id", node.id},
                       {"dsl", node.dsl},
                       {"state", std::string(native_ops::to_string(node.state))},
                       {"reason", node.reason},
                       {"hits", node.hits},
                       {"cond_errors", node.cond_errors}});
    }
    graphs.push_back({{"op", graph.lib_symbol + "::" + graph.op_symbol},
                      {"key", c10::toString(graph.key)},
                      {"router_installed", graph.router_installed},
                      {"fallthroughs", graph.fallthroughs},
                      {"nodes", nodes}});
  }
  return nlohmann::json{{"initialized", native_ops::is_initialized()},
                        {"disabled", native_ops::is_disabled()},
                        {"graphs", graphs}}
      .dump();
}

// A library cannot fail its own loading cleanly: report, and leave everything uninstalled.
const bool activated = [] {
  try {
    native_ops::init();
    return true;
  } catch (const std::exception& e) {
    std::cerr << "native-ops: not activated: " << e.what() << "\n";
    return false;
  }
}();

}  // namespace

TORCH_LIBRARY(native_ops, m) {
  m.def("status() -> str", [] { return status_json(); });
}
