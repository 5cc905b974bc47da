// An ordering function for NATIVE_OPS_ORDER_FN=libordering_function.so:drop_cpp_nodes.
#include "native_ops/plugin.h"

extern "C" __attribute__((visibility("default"))) native_ops::Graph drop_cpp_nodes(const std::string&, c10::DispatchKey,
                                                                                   const native_ops::Graph& graph) {
  native_ops::Graph kept;
  for (const native_ops::NodeInfo& node : graph) {
    if (node.dsl != "cpp") kept.push_back(node);
  }
  return kept;
}
