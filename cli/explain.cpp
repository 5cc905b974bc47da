// native-ops explain OP --args SPEC [--key KEY]
#include <iomanip>
#include <iostream>
#include <optional>

#include "commands.h"
#include "native_ops/registry.h"
#include "native_ops/report.h"
#include "native_ops/testing/arg_spec.h"

namespace native_ops::cli {

namespace {

struct ExplainRequest {
  std::string op;
  std::string args;
  std::string key;
};

void print_explanation(const Explanation& e, bool color) {
  std::cout << e.schema << " @ " << c10::toString(e.key) << "\n";
  if (e.checks.empty()) {
    std::cout << "  no override is registered: aten runs\n";
    return;
  }
  if (!e.router_installed) std::cout << "  the router is not installed (native-ops off, or no active node)\n";
  std::optional<std::string> picked;  // the node a table that applies lets fire, or "aten"
  if (const auto& table = e.selection) {
    std::string features;
    for (const auto& [name, value] : table->features) features += " " + name + "=" + std::to_string(value);
    std::cout << "  selection table (" << table->source << "): " << table->dtype << features;
    if (table->applies) {
      picked = table->cell;
      std::cout << " falls in " << table->bucket << ": " << table->cell;
      if (table->margin > 0)
        std::cout << " (" << std::fixed << std::setprecision(2) << table->margin << "x aten as tuned)";
      std::cout << "\n";
    } else {
      std::cout << ": the table does not apply (" << table->why << "); routed in order\n";
    }
  }
  for (size_t i = 0; i < e.checks.size(); ++i) {
    const CondCheck& check = e.checks[i];
    std::string verdict;
    std::string state;
    if (!check.evaluated) {
      verdict = "skipped (" + std::string(to_string(check.node.state)) + ")";
      state = std::string(to_string(check.node.state));
    } else if (check.fires) {
      verdict = "accepts: FIRES";
      state = "fires";
    } else if (check.accepted && picked && *picked != check.node.id) {
      verdict = "accepts (the selection table picks " + *picked + ")";
      state = "active";
    } else if (check.accepted) {
      verdict = "accepts (an earlier node fires)";
      state = "active";
    } else {
      verdict = "declines";
      state = "disabled";
    }
    std::cout << "  " << i << "  " << check.node.id << " (" << check.node.dsl << "): " << paint(verdict, state, color);
    if (!check.reason.empty()) std::cout << ": " << check.reason;
    std::cout << "\n";
  }
  std::cout << "  => " << (e.fires ? *e.fires + " runs" : std::string("aten runs")) << "\n";
}

}  // namespace

void add_explain_command(CLI::App& app, const GlobalOptions& options) {
  auto request = std::make_shared<ExplainRequest>();
  CLI::App* command =
      app.add_subcommand("explain", "Say which override fires for given inputs, and why each other one declines");
  command->add_option("op", request->op, "The op symbol: \"bmm\", \"add_.Tensor\"")->required();
  command
      ->add_option("--args", request->args,
                   "The inputs, e.g. \"bf16[8,128,1], bf16[8,1,256]\"; {strides}, @device, numbers, "
                   "true/false, none, [int lists] and dtypes alone too")
      ->required();
  command->add_option("--key", request->key, "The dispatch key (default: that of the first tensor's device)");
  command->callback([&options, request] {
    options.start();
    const torch::jit::Stack arguments = parse_arg_spec(request->args);
    const c10::DispatchKey key = request->key.empty() ? dispatch_key_of(arguments) : parse_dispatch_key(request->key);
    const Explanation explanation = explain(request->op, key, arguments);
    if (options.json) {
      std::cout << explanation_json(explanation) << "\n";
    } else {
      print_explanation(explanation, options.use_color());
    }
  });
}

}  // namespace native_ops::cli
