// native-ops list [--op PATTERN] [--dsl NAME] [--key KEY]
#include <fnmatch.h>
#include <algorithm>

#include <iomanip>
#include <iostream>

#include "commands.h"
#include "native_ops/dsl.h"
#include "native_ops/error.h"
#include "native_ops/names.h"
#include "native_ops/policy.h"
#include "native_ops/registry.h"
#include "native_ops/report.h"

namespace native_ops::cli {

namespace {

struct ListFilter {
  std::string op_pattern;  // a glob on op symbols: "add*", "_softmax"
  std::string dsl;
  std::string key;
};

std::vector<GraphInfo> selected_graphs(const ListFilter& filter) {
  if (!filter.dsl.empty()) require_dsl(filter.dsl);
  const std::optional<c10::DispatchKey> key =
      filter.key.empty() ? std::nullopt : std::optional<c10::DispatchKey>(parse_dispatch_key(filter.key));
  std::vector<GraphInfo> selected;
  for (GraphInfo& graph : graphs()) {
    if (!filter.op_pattern.empty() && fnmatch(filter.op_pattern.c_str(), graph.op_symbol.c_str(), 0) != 0) continue;
    if (key && graph.key != *key) continue;
    if (!filter.dsl.empty()) {
      const bool has_dsl = std::any_of(graph.nodes.begin(), graph.nodes.end(),
                                       [&](const NodeInfo& node) { return node.dsl == filter.dsl; });
      if (!has_dsl) continue;
    }
    selected.push_back(std::move(graph));
  }
  return selected;
}

void print_table(const std::vector<GraphInfo>& graphs, bool color) {
  if (is_disabled()) {
    std::cout << "native-ops is off (NATIVE_OPS_DISABLE or TORCH_DISABLE_NATIVE_JIT): no router installed\n";
  }
  if (graphs.empty()) std::cout << "no overrides match\n";
  size_t id_width = 24;  // widened to the longest id, so that columns stay aligned
  for (const GraphInfo& graph : graphs) {
    for (const NodeInfo& node : graph.nodes) id_width = std::max(id_width, node.id.size() + 2);
  }
  for (const GraphInfo& graph : graphs) {
    std::cout << graph.lib_symbol << "::" << graph.op_symbol << " @ " << c10::toString(graph.key) << "  ("
              << (graph.typed ? "typed" : "boxed") << " router, "
              << (graph.router_installed ? "installed" : "not installed") << ", " << graph.fallthroughs
              << " fall-throughs)\n";
    for (const std::string& overlap : graph.overlaps) {
      std::cout << "  " << paint("overlap", "disabled", color) << ": another library's kernel is at this (op, key), "
                << overlap << "\n";
    }
    if (graph.selection) {
      std::cout << "  selection table (" << graph.selection_source << "): " << summarize(*graph.selection) << "\n";
    }
    std::cout << "   #  " << std::left << std::setw(id_width) << "node id" << std::setw(8) << "dsl" << std::setw(14)
              << "applies" << std::setw(10) << "hits" << std::setw(12) << "origin"
              << "state" << std::right << "\n";
    size_t position = 0;
    for (const NodeInfo& node : graph.nodes) {
      const std::string state(to_string(node.state));
      std::cout << "  " << std::setw(2) << position++ << "  " << std::left << std::setw(id_width) << node.id
                << std::setw(8) << node.dsl << std::setw(14) << (node.unconditional ? "unconditional" : "cond")
                << std::setw(10) << node.hits << std::setw(11) << node.origin << " " << std::right
                << paint(state, state, color);
      if (!node.reason.empty()) std::cout << ": " << node.reason;
      std::cout << "\n";
    }
  }
}

}  // namespace

void add_list_command(CLI::App& app, const GlobalOptions& options) {
  auto filter = std::make_shared<ListFilter>();
  CLI::App* list = app.add_subcommand("list", "List every (op, key) graph: order, node id, dsl, state, origin");
  list->add_option("--op", filter->op_pattern, "Only ops whose symbol matches this glob (\"add*\", \"bmm\")");
  list->add_option("--dsl", filter->dsl, "Only graphs with a node of this dsl");
  list->add_option("--key", filter->key, "Only graphs at this dispatch key (CPU, CUDA)");
  list->callback([&options, filter] {
    options.start();
    const std::vector<GraphInfo> selected = selected_graphs(*filter);
    if (options.json) {
      std::cout << graphs_json(selected) << "\n";
    } else {
      print_table(selected, options.use_color());
    }
  });
}

}  // namespace native_ops::cli
