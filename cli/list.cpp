#include <iomanip>
#include <iostream>

#include "commands.h"
#include "native_ops/registry.h"

namespace native_ops::cli {

namespace {

void print_graphs() {
  native_ops::init();
  if (native_ops::is_disabled()) {
    std::cout << "native-ops is off (NATIVE_OPS_DISABLE or TORCH_DISABLE_NATIVE_JIT): no router installed\n";
  }
  for (const GraphInfo& graph : graphs()) {
    std::cout << graph.lib_symbol << "::" << graph.op_symbol << " @ " << c10::toString(graph.key) << "  ("
              << (graph.typed ? "typed" : "boxed") << " router, "
              << (graph.router_installed ? "installed" : "not installed") << ")\n";
    std::cout << "   #  " << std::left << std::setw(24) << "node id" << std::setw(8) << "dsl" << std::setw(14)
              << "applies" << "state" << std::right << "\n";
    size_t position = 0;
    for (const NodeInfo& node : graph.nodes) {
      std::cout << "  " << std::setw(2) << position++ << "  " << std::left << std::setw(24) << node.id
                << std::setw(8) << node.dsl << std::setw(14) << (node.unconditional ? "unconditional" : "cond")
                << to_string(node.state) << std::right;
      if (!node.reason.empty()) std::cout << ": " << node.reason;
      std::cout << "\n";
    }
  }
}

}  // namespace

void add_list_command(CLI::App& app) {
  CLI::App* list = app.add_subcommand("list", "List every (op, key) graph: order, node id, dsl, state");
  list->callback(print_graphs);
}

}  // namespace native_ops::cli
