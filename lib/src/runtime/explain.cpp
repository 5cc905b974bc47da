// explain(): what every cond of a graph makes of one call, without running an impl.
#include <algorithm>

#include "native_ops/error.h"
#include "runtime/registry_state.h"

namespace native_ops {

namespace {

// Where a call falls in `table`, as the router's pick() decides (device read afresh).
SelectionLookup look_up(const SelectionTable& table, const detail::FeaturesFunction& features_of,
                        const c10::FunctionSchema& schema, const torch::jit::Stack& arguments) {
  SelectionLookup lookup;
  ShapeFeatures features;
  try {
    features = features_of.of(schema, arguments);
  } catch (const std::exception& e) {
    lookup.why = std::string("the op's features function threw: ") + e.what();
    return lookup;
  }
  lookup.dtype = dtype_name(features.dtype);
  for (size_t f = 0; f < features.count && f < table.features.size(); ++f) {
    lookup.features.emplace_back(table.features[f], features.values[f]);
  }
  const auto grid = std::find_if(table.grids.begin(), table.grids.end(),
                                 [&](const SelectionGrid& g) { return g.dtype == features.dtype; });
  if (grid == table.grids.end()) {
    lookup.why = "the table has no " + lookup.dtype + " cells";
    return lookup;
  }
  if (features.count != table.features.size()) {
    lookup.why = "the features function gave " + std::to_string(features.count) + " features, the table has " +
                 std::to_string(table.features.size());
    return lookup;
  }
  if (table.device) {
    const std::string tuned = table.device->name + " (" + table.device->capability + ")";
    if (features.cuda_device < 0) {
      lookup.why = "the table was tuned on " + tuned + " and the call is not on a CUDA device";
      return lookup;
    }
    const std::optional<TunedDevice> device = loaded_cuda_device(features.cuda_device);
    if (device != table.device) {
      lookup.why = "the table was tuned on " + tuned + ", cuda:" + std::to_string(features.cuda_device) + " is " +
                   (device ? device->name + " (" + device->capability + ")" : std::string("unknown"));
      return lookup;
    }
  }
  size_t cell = 0;
  for (size_t f = 0; f < table.features.size(); ++f) {
    const size_t bucket = bucket_of(grid->edges[f], features.values[f]);
    cell = cell * (grid->edges[f].size() + 1) + bucket;
    lookup.bucket += (f ? ", " : "") + table.features[f] + " " + bucket_range(grid->edges[f], bucket);
  }
  lookup.applies = true;
  lookup.cell = grid->cells[cell];
  if (!grid->margins.empty()) lookup.margin = grid->margins[cell];
  return lookup;
}

}  // namespace

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
  std::optional<SelectionTable> table;
  std::string table_source;
  const detail::FeaturesFunction* features_of = nullptr;
  {
    detail::Registry& r = detail::registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const detail::GraphEntry* graph = detail::find_graph(r, "aten", symbol.str(), key);
    if (graph == nullptr) return explanation;
    explanation.router_installed = graph->library != nullptr;
    order = graph->routing_order();
    if (const detail::OpFeatures* features = detail::find_features(graph->lib_symbol, graph->op_symbol);
        graph->selection && features != nullptr) {
      table = graph->selection;
      table_source = graph->selection_source;
      features_of = features->fn.get();  // never removed
    }
    for (const detail::Node* node : order) {
      CondCheck check;
      check.node = detail::info_of(*graph, *node);
      explanation.checks.push_back(std::move(check));
    }
  }
  // Conds and features functions run outside the lock: they are the registrants' code.
  if (table) {
    explanation.selection = look_up(*table, *features_of, schema, arguments);
    explanation.selection->source = table_source;
  }
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
    // A table that applies lets only the node its cell names fire (a cell naming a node
    // that is not active routes in order, as the router does).
    const bool table_decides =
        explanation.selection && explanation.selection->applies &&
        (explanation.selection->cell == "aten" ||
         std::any_of(explanation.checks.begin(), explanation.checks.end(), [&](const CondCheck& c) {
           return c.node.id == explanation.selection->cell && c.node.state == NodeState::active;
         }));
    const bool may_fire = !table_decides || explanation.selection->cell == check.node.id;
    if (check.accepted && may_fire && !explanation.fires && explanation.router_installed) {
      check.fires = true;
      explanation.fires = check.node.id;
    }
  }
  return explanation;
}

}  // namespace native_ops
