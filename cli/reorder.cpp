// native-ops reorder --policy FILE [--check]: --policy is the global option (main.cpp),
// which every subcommand runs under; reorder shows what it changes.
#include <iostream>

#include "commands.h"
#include "native_ops/policy.h"
#include "native_ops/report.h"

namespace native_ops::cli {

namespace {

struct ReorderRequest {
  bool check_only = false;
};

std::string joined(const std::vector<std::string>& ids) {
  if (ids.empty()) return "(aten only)";
  std::string text;
  for (const std::string& id : ids) text += (text.empty() ? "" : ", ") + id;
  return text;
}

}  // namespace

void add_reorder_command(CLI::App& app, const GlobalOptions& options) {
  auto request = std::make_shared<ReorderRequest>();
  CLI::App* command = app.add_subcommand(
      "reorder", "Check an ordering policy against the registered graphs and apply it; show before -> after");
  command->add_flag("--check", request->check_only, "Only check the policy; change nothing");
  command->callback([&options, request] {
    if (options.policy.empty()) throw CLI::RequiredError("--policy");
    options.start(/*apply_policy=*/false);
    const Policy policy = load_policy(options.policy);
    const PolicyPlan plan = request->check_only ? plan_policy(policy) : apply_policy(policy, Apply::now);
    if (options.json) {
      std::cout << policy_plan_json(plan, options.policy, !request->check_only) << "\n";
      return;
    }
    for (const std::string& warning : plan.warnings) std::cout << "warning: " << warning << "\n";
    if (request->check_only) {
      std::cout << "policy " << options.policy << " is valid; it would change " << plan.changes.size() << " graph(s)\n";
      return;
    }
    if (plan.changes.empty()) std::cout << "no change\n";
    for (const GraphChange& change : plan.changes) {
      std::cout << change.graph << ": " << joined(change.before) << " -> " << joined(change.after) << "\n";
    }
  });
}

}  // namespace native_ops::cli
