#include "native_ops/report.h"

#include <nlohmann/json.hpp>

#include "native_ops/dsl.h"
#include "native_ops/policy.h"

namespace native_ops {

std::string graphs_json(const std::vector<GraphInfo>& graphs) {
  nlohmann::json list = nlohmann::json::array();
  for (const GraphInfo& graph : graphs) {
    nlohmann::json nodes = nlohmann::json::array();
    for (size_t position = 0; position < graph.nodes.size(); ++position) {
      const NodeInfo& node = graph.nodes[position];
      nodes.push_back({{"position", position},
                       {"id", node.id},
                       {"dsl", node.dsl},
                       {"unconditional", node.unconditional},
                       {"state", std::string(to_string(node.state))},
                       {"reason", node.reason},
                       {"origin", node.origin},
                       {"hits", node.hits},
                       {"cond_errors", node.cond_errors}});
    }
    list.push_back({{"op", graph.lib_symbol + "::" + graph.op_symbol},
                    {"op_symbol", graph.op_symbol},
                    {"key", c10::toString(graph.key)},
                    {"typed", graph.typed},
                    {"router_installed", graph.router_installed},
                    {"fallthroughs", graph.fallthroughs},
                    {"overlaps", graph.overlaps},
                    {"nodes", std::move(nodes)},
                    {"selection", graph.selection ? nlohmann::json{{"source", graph.selection_source},
                                                                   {"summary", summarize(*graph.selection)}}
                                                  : nlohmann::json()}});
  }
  return nlohmann::json{
      {"version", 1}, {"initialized", is_initialized()}, {"disabled", is_disabled()}, {"graphs", std::move(list)}}
      .dump(2);
}

std::string dsls_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const Dsl* dsl : dsls()) {
    list.push_back({{"name", std::string(dsl->name())},
                    {"available", dsl->runtime_available()},
                    {"version", dsl->runtime_version()},
                    {"reason", dsl->unavailable_reason()}});
  }
  return nlohmann::json{{"version", 1}, {"dsls", std::move(list)}}.dump(2);
}

std::string explanation_json(const Explanation& explanation) {
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t position = 0; position < explanation.checks.size(); ++position) {
    const CondCheck& check = explanation.checks[position];
    nodes.push_back({{"position", position},
                     {"id", check.node.id},
                     {"dsl", check.node.dsl},
                     {"state", std::string(to_string(check.node.state))},
                     {"evaluated", check.evaluated},
                     {"accepted", check.accepted},
                     {"fires", check.fires},
                     {"reason", check.reason}});
  }
  nlohmann::json selection;
  if (const auto& lookup = explanation.selection) {
    nlohmann::json features = nlohmann::json::object();
    for (const auto& [name, value] : lookup->features) features[name] = value;
    selection = {{"source", lookup->source},   {"dtype", lookup->dtype},  {"features", features},
                 {"applies", lookup->applies}, {"why", lookup->why},      {"bucket", lookup->bucket},
                 {"cell", lookup->cell},       {"margin", lookup->margin}};
  }
  return nlohmann::json{{"version", 1},
                        {"op", explanation.lib_symbol + "::" + explanation.op_symbol},
                        {"key", c10::toString(explanation.key)},
                        {"schema", explanation.schema},
                        {"router_installed", explanation.router_installed},
                        {"fires", explanation.fires ? nlohmann::json(*explanation.fires) : nlohmann::json()},
                        {"nodes", std::move(nodes)},
                        {"selection", std::move(selection)}}
      .dump(2);
}

std::string policy_plan_json(const PolicyPlan& plan, const std::string& policy, bool applied) {
  nlohmann::json changes = nlohmann::json::array();
  for (const GraphChange& change : plan.changes) {
    changes.push_back({{"graph", change.graph},
                       {"before", change.before},
                       {"after", change.after},
                       {"table_before", change.table_before},
                       {"table_after", change.table_after}});
  }
  return nlohmann::json{{"version", 1},
                        {"policy", policy},
                        {"applied", applied},
                        {"warnings", plan.warnings},
                        {"changes", std::move(changes)}}
      .dump(2);
}

}  // namespace native_ops
