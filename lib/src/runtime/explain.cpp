// explain(): what every cond of a graph makes of one call, without running an impl.
#include "native_ops/error.h"
#include "runtime/registry_state.h"

namespace native_ops {

c10::DispatchKey dispatch_key_of(const torch::jit::Stack& arguments) {
  for (const c10::IValue& argument : arguments) {
    if (argument.isTensor()) {
      const at::Tensor& tensor = argument.toTensor();
      return c10::computeDispatchKey(tensor.scalar_type(), tensor.layout(), tensor.device());
    }
  }
  return c10::DispatchKey::CPU;
}

Explanation explain(std::string_view op_symbol, c10::DispatchKey key, torch::jit::Stack arguments) {
  detail::ensure_builtins();
  const OpSymbol symbol = parse_op_symbol(op_symbol);
  const auto op = c10::Dispatcher::singleton().findSchema({"aten::" + symbol.name, symbol.overload});
  if (!op) throw Error(unknown_op_message("aten", symbol));
  const c10::FunctionSchema& schema = op->schema();
  try {
    schema.checkAndNormalizeInputs(arguments);
  } catch (const c10::Error& e) {
    throw Error("the arguments do not fit aten::" + symbol.str() + ": " + e.what_without_backtrace());
  }

  Explanation explanation;
  explanation.lib_symbol = "aten";
  explanation.op_symbol = symbol.str();
  explanation.schema = c10::toString(schema);
  explanation.key = key;
  std::vector<const detail::Node*> order;
  {
    detail::Registry& r = detail::registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const detail::GraphEntry* graph = detail::find_graph(r, "aten", symbol.str(), key);
    if (graph == nullptr) return explanation;
    explanation.router_installed = graph->library != nullptr;
    order = graph->routing_order();
    for (const detail::Node* node : order) {
      CondCheck check;
      check.node = detail::info_of(*graph, *node);
      explanation.checks.push_back(std::move(check));
    }
  }
  // Conds run outside the lock: they are the registrants' code.
  for (size_t i = 0; i < order.size(); ++i) {
    CondCheck& check = explanation.checks[i];
    if (check.node.state != NodeState::active) {
      check.reason = check.node.reason;
      continue;
    }
    check.evaluated = true;
    try {
      const Verdict verdict = order[i]->callables->check(schema, arguments);
      check.accepted = verdict.accepted();
      if (!check.accepted) check.reason = verdict.reason();
    } catch (const c10::Error& e) {
      check.reason = std::string("the cond threw: ") + e.what_without_backtrace();
    } catch (const std::exception& e) {
      check.reason = std::string("the cond threw: ") + e.what();
    }
    if (check.accepted && !explanation.fires && explanation.router_installed) {
      check.fires = true;
      explanation.fires = check.node.id;
    }
  }
  return explanation;
}

}  // namespace native_ops
