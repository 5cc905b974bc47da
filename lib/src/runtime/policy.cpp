// Ordering policies: parsing (shape and types), planning (against the registry), applying.
#include "native_ops/policy.h"
#include "native_ops/faults.h"

#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "native_ops/dsl.h"
#include "native_ops/log.h"
#include "runtime/names.h"
#include "runtime/registry_state.h"
#include "runtime/selection.h"

namespace native_ops {

namespace {

// Ordered: "order" rules apply in the file's order.
using json = nlohmann::ordered_json;

// Bounds on what a policy may be, checked before it is parsed.
constexpr size_t kMaxPolicyBytes = size_t{16} << 20;
constexpr int kMaxNesting = 64;

// Whether arrays and objects nest deeper than kMaxNesting anywhere in `text` (outside
// strings): the JSON library recurses once a level, so deeper input could overflow the stack.
bool nests_too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

const std::vector<std::string> kTopLevelKeys = {"version",      "description", "disable",  "keep_dsls",
                                                "dsl_priority", "order",       "on_error", "select"};
const std::vector<std::string> kSelectionKeys = {"features", "device", "tuned_with", "tables"};
const std::vector<std::string> kDeviceKeys = {"name", "capability"};
const std::vector<std::string> kGridKeys = {"edges", "cells", "margins"};
const std::vector<std::string> kSelectorKeys = {"op", "dsl", "key", "node"};

bool is_glob(const std::string& pattern) { return pattern.find_first_of("*?[") != std::string::npos; }

class PolicyParser {
 public:
  explicit PolicyParser(std::string source) : source_(std::move(source)) {}

  Policy parse(std::string_view text) {
    if (text.size() > kMaxPolicyBytes) {
      fail("", "is " + std::to_string(text.size()) + " bytes: a policy may have " + std::to_string(kMaxPolicyBytes) +
                   " at most");
    }
    if (nests_too_deep(text)) {
      fail("",
           "nests arrays and objects deeper than " + std::to_string(kMaxNesting) + " levels, which no policy needs");
    }
    json doc;
    // Duplicate keys are an error, not last-wins: the keys seen so far in each open object.
    std::vector<std::vector<std::string>> keys;
    const auto refuse_duplicates = [&](int, json::parse_event_t event, json& parsed) {
      if (event == json::parse_event_t::object_start) keys.emplace_back();
      if (event == json::parse_event_t::object_end) keys.pop_back();
      if (event == json::parse_event_t::key) {
        const std::string& key = parsed.get_ref<const std::string&>();
        if (std::find(keys.back().begin(), keys.back().end(), key) != keys.back().end()) {
          fail("", "the key \"" + excerpt(key) + "\" appears twice in one object: keep one");
        }
        keys.back().push_back(key);
      }
      return true;
    };
    try {
      doc = json::parse(text.begin(), text.end(), refuse_duplicates);
    } catch (const json::parse_error& e) {
      const auto [line, column] = line_and_column(text, e.byte);
      std::string what = e.what();
      const size_t detail = what.find(": ", what.find("column"));
      fail_at(std::to_string(line) + ":" + std::to_string(column),
              "malformed JSON: " + (detail == std::string::npos ? what : what.substr(detail + 2)));
    } catch (const json::exception& e) {  // found by fuzzing: a number too large for a double
      fail("", std::string("unreadable JSON: ") + e.what());
    }
    if (!doc.is_object()) fail("", "expected an object with \"version\": 1");
    for (const auto& [key, value] : doc.items()) check_known(key, kTopLevelKeys, "");
    if (!doc.contains("version")) fail("", "\"version\" is missing: add \"version\": 1 (2 with \"select\")");
    const json& version = doc["version"];
    if (!version.is_number_integer() || (version.get<int64_t>() != 1 && version.get<int64_t>() != 2)) {
      fail("/version", "expected 1, or 2 for a policy with \"select\", found " + excerpt(version.dump()));
    }
    Policy policy;
    policy.source = source_;
    policy.version = static_cast<int>(version.get<int64_t>());
    if (doc.contains("select")) {
      if (policy.version < 2) fail("/select", "selection tables need \"version\": 2");
      for (const auto& [graph, table] : object_at(doc["select"], "/select").items()) {
        policy.select.push_back(selection(graph, table, "/select/" + graph));
      }
    }
    if (doc.contains("description")) string_at(doc["description"], "/description");
    if (doc.contains("disable")) {
      const json& list = array_at(doc["disable"], "/disable");
      for (size_t i = 0; i < list.size(); ++i)
        policy.disable.push_back(selector(list[i], "/disable/" + std::to_string(i)));
    }
    if (doc.contains("keep_dsls")) {
      policy.has_keep_dsls = true;
      policy.keep_dsls = strings_at(doc["keep_dsls"], "/keep_dsls");
    }
    if (doc.contains("dsl_priority")) policy.dsl_priority = strings_at(doc["dsl_priority"], "/dsl_priority");
    if (doc.contains("order")) {
      for (const auto& [op, list] : object_at(doc["order"], "/order").items()) {
        policy.order.emplace_back(op, strings_at(list, "/order/" + op));
      }
    }
    if (doc.contains("on_error")) {
      for (const auto& [target, action] : object_at(doc["on_error"], "/on_error").items()) {
        const std::string value = string_at(action, "/on_error/" + target);
        if (value != "strict" && value != "fallback") {
          fail("/on_error/" + target, "expected \"strict\" or \"fallback\", found \"" + value + "\"");
        }
        policy.on_error.emplace_back(target, parse_on_error(value));
      }
    }
    return policy;
  }

 private:
  static std::pair<size_t, size_t> line_and_column(std::string_view text, size_t byte) {
    size_t line = 1;
    size_t column = 1;
    for (size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return {line, column};
  }

  PolicySelection selection(const std::string& graph, const json& value, const std::string& pointer) {
    const size_t at = graph.find('@');
    if (at == std::string::npos || at == 0 || at + 1 == graph.size()) {
      fail(pointer, "name the graph as \"<op>@<KEY>\", e.g. \"_softmax@CUDA\"");
    }
    PolicySelection result{graph.substr(0, at), graph.substr(at + 1), {}};
    if (is_glob(result.op_symbol)) fail(pointer, "a selection table names one op, not a glob");
    const json& object = object_at(value, pointer);
    for (const auto& [key, field] : object.items()) check_known(key, kSelectionKeys, pointer);
    if (!object.contains("features")) fail(pointer, "\"features\" is missing");
    if (!object.contains("tables")) fail(pointer, "\"tables\" is missing");
    SelectionTable& table = result.table;
    table.features = strings_at(object["features"], pointer + "/features");
    if (object.contains("device")) {
      const json& device = object_at(object["device"], pointer + "/device");
      for (const auto& [key, field] : device.items()) check_known(key, kDeviceKeys, pointer + "/device");
      if (!device.contains("name") || !device.contains("capability")) {
        fail(pointer + "/device", "give both \"name\" and \"capability\"");
      }
      table.device = TunedDevice{string_at(device["name"], pointer + "/device/name"),
                                 string_at(device["capability"], pointer + "/device/capability")};
    }
    if (object.contains("tuned_with")) {
      for (const auto& [key, field] : object_at(object["tuned_with"], pointer + "/tuned_with").items()) {
        table.tuned_with.emplace_back(key, string_at(field, pointer + "/tuned_with/" + key));
      }
    }
    for (const auto& [dtype, grid] : object_at(object["tables"], pointer + "/tables").items()) {
      table.grids.push_back(selection_grid(table.features, dtype, grid, pointer + "/tables/" + dtype));
    }
    if (const std::string problem = detail::selection_problem(table); !problem.empty()) fail(pointer, problem);
    return result;
  }

  SelectionGrid selection_grid(const std::vector<std::string>& features, const std::string& dtype, const json& value,
                               const std::string& pointer) {
    SelectionGrid grid;
    try {
      grid.dtype = parse_dtype(dtype);
    } catch (const Error& e) {
      fail(pointer, e.what());
    }
    const json& object = object_at(value, pointer);
    for (const auto& [key, field] : object.items()) check_known(key, kGridKeys, pointer);
    if (!object.contains("edges") || !object.contains("cells")) fail(pointer, "give \"edges\" and \"cells\"");
    const json& edges = object_at(object["edges"], pointer + "/edges");
    for (const auto& [name, list] : edges.items()) check_known(name, features, pointer + "/edges");
    for (const std::string& name : features) {
      const std::string at = pointer + "/edges/" + name;
      if (!edges.contains(name))
        fail(pointer + "/edges", "the edges of \"" + name + "\" are missing ([] for one bucket)");
      std::vector<int64_t> values;
      const json& list = array_at(edges[name], at);
      for (size_t i = 0; i < list.size(); ++i) {
        if (!list[i].is_number_integer()) fail(at + "/" + std::to_string(i), "expected an integer");
        values.push_back(list[i].get<int64_t>());
      }
      grid.edges.push_back(std::move(values));
    }
    grid.cells = strings_at(object["cells"], pointer + "/cells");
    if (object.contains("margins")) {
      const json& margins = array_at(object["margins"], pointer + "/margins");
      for (size_t i = 0; i < margins.size(); ++i) {
        if (!margins[i].is_number()) fail(pointer + "/margins/" + std::to_string(i), "expected a number");
        grid.margins.push_back(margins[i].get<double>());
      }
    }
    return grid;
  }

  PolicySelector selector(const json& value, const std::string& pointer) {
    const json& object = object_at(value, pointer);
    if (object.empty()) fail(pointer, "an empty selector would match every node: name an op, dsl, key or node");
    PolicySelector selector;
    for (const auto& [key, field] : object.items()) {
      check_known(key, kSelectorKeys, pointer);
      const std::string text = string_at(field, pointer + "/" + key);
      if (key == "op") selector.op = text;
      if (key == "dsl") selector.dsl = text;
      if (key == "key") selector.key = text;
      if (key == "node") selector.node = text;
    }
    return selector;
  }

  void check_known(const std::string& key, const std::vector<std::string>& known, const std::string& pointer) {
    if (std::find(known.begin(), known.end(), key) != known.end()) return;
    std::string names;
    for (const std::string& name : known) names += (names.empty() ? "" : ", ") + name;
    fail(pointer.empty() ? "/" : pointer,
         "unknown key \"" + excerpt(key) + "\"." + did_you_mean(key, known) + " Known keys: " + names);
  }

  const json& array_at(const json& value, const std::string& pointer) {
    if (!value.is_array()) fail(pointer, std::string("expected an array, found ") + value.type_name());
    return value;
  }
  const json& object_at(const json& value, const std::string& pointer) {
    if (!value.is_object()) fail(pointer, std::string("expected an object, found ") + value.type_name());
    return value;
  }
  std::string string_at(const json& value, const std::string& pointer) {
    if (!value.is_string()) fail(pointer, std::string("expected a string, found ") + value.type_name());
    return value.get<std::string>();
  }
  std::vector<std::string> strings_at(const json& value, const std::string& pointer) {
    std::vector<std::string> strings;
    const json& list = array_at(value, pointer);
    for (size_t i = 0; i < list.size(); ++i) strings.push_back(string_at(list[i], pointer + "/" + std::to_string(i)));
    return strings;
  }

  [[noreturn]] void fail(const std::string& pointer, const std::string& what) const {
    throw Error("policy " + source_ + (pointer.empty() ? "" : " at " + pointer) + ": " + what);
  }
  [[noreturn]] void fail_at(const std::string& position, const std::string& what) const {
    throw Error("policy " + source_ + ":" + position + ": " + what);
  }

  std::string source_;
};

std::string op_name_of(const std::string& op_symbol) { return op_symbol.substr(0, op_symbol.find('.')); }

bool op_matches(const std::string& pattern, const std::string& op_symbol) {
  return fnmatch(pattern.c_str(), op_symbol.c_str(), 0) == 0 ||
         fnmatch(pattern.c_str(), op_name_of(op_symbol).c_str(), 0) == 0;
}

// Checks every name a policy uses against the registry: unknown ones are errors.
class PolicyChecker {
 public:
  PolicyChecker(const Policy& policy, const std::vector<GraphInfo>& graphs) : policy_(policy), dsl_names_(dsl_names()) {
    for (const GraphInfo& graph : graphs) {
      for (const NodeInfo& node : graph.nodes) node_ids_.push_back(node.id);
    }
  }

  void check() {
    for (size_t i = 0; i < policy_.disable.size(); ++i) {
      const PolicySelector& s = policy_.disable[i];
      const std::string at = "/disable/" + std::to_string(i);
      if (!s.op.empty()) op(s.op, at + "/op");
      if (!s.dsl.empty()) dsl(s.dsl, at + "/dsl");
      if (!s.key.empty()) key(s.key, at + "/key");
      if (!s.node.empty()) node(s.node, at + "/node");
    }
    for (size_t i = 0; i < policy_.keep_dsls.size(); ++i) dsl(policy_.keep_dsls[i], "/keep_dsls/" + std::to_string(i));
    std::set<std::string> seen;
    for (size_t i = 0; i < policy_.dsl_priority.size(); ++i) {
      dsl(policy_.dsl_priority[i], "/dsl_priority/" + std::to_string(i));
      if (!seen.insert(policy_.dsl_priority[i]).second) {
        fail("/dsl_priority/" + std::to_string(i), "dsl " + policy_.dsl_priority[i] + " is listed twice");
      }
    }
    for (const auto& [pattern, entries] : policy_.order) {
      op(pattern, "/order/" + pattern);
      for (size_t i = 0; i < entries.size(); ++i)
        node_or_dsl(entries[i], "/order/" + pattern + "/" + std::to_string(i));
    }
    for (const auto& [target, action] : policy_.on_error) {
      if (target != "*") node_or_dsl(target, "/on_error/" + target);
    }
    for (const PolicySelection& selection : policy_.select) {
      const std::string at = "/select/" + selection.op_symbol + "@" + selection.key;
      op(selection.op_symbol, at);
      key(selection.key, at);
    }
  }

 private:
  void op(const std::string& pattern, const std::string& at) {
    if (is_glob(pattern)) return;
    static const std::vector<std::string> symbols = detail::dispatcher_op_symbols("aten");
    const bool known = std::any_of(symbols.begin(), symbols.end(), [&](const std::string& symbol) {
      return symbol == pattern || op_name_of(symbol) == pattern;
    });
    if (!known) fail(at, "unknown op " + excerpt(pattern) + "." + did_you_mean(pattern, symbols));
  }
  void dsl(const std::string& name, const std::string& at) {
    if (std::find(dsl_names_.begin(), dsl_names_.end(), name) == dsl_names_.end()) {
      fail(at, unknown_dsl_message(name));
    }
  }
  void node(const std::string& id, const std::string& at) {
    if (std::find(node_ids_.begin(), node_ids_.end(), id) == node_ids_.end()) {
      fail(at, unknown_node_message(id, node_ids_));
    }
  }
  void node_or_dsl(const std::string& name, const std::string& at) {
    if (const std::string why = detail::unknown_node_or_dsl(name, node_ids_); !why.empty()) fail(at, why);
  }
  void key(const std::string& name, const std::string& at) {
    try {
      parse_dispatch_key(name);
    } catch (const Error& e) {
      fail(at, e.what());
    }
  }
  [[noreturn]] void fail(const std::string& at, const std::string& what) const {
    throw Error("policy " + policy_.source + " at " + at + ": " + what);
  }

  const Policy& policy_;
  std::vector<std::string> dsl_names_;
  std::vector<std::string> node_ids_;
};

bool selects(const PolicySelector& s, const GraphInfo& graph, const NodeInfo& node) {
  return (s.op.empty() || op_matches(s.op, graph.op_symbol)) && (s.dsl.empty() || s.dsl == node.dsl) &&
         (s.key.empty() || parse_dispatch_key(s.key) == graph.key) && (s.node.empty() || s.node == node.id);
}

std::vector<std::string> active_ids(const std::vector<const NodeInfo*>& nodes) {
  std::vector<std::string> ids;
  for (const NodeInfo* node : nodes) {
    if (node->state != NodeState::disabled && node->state != NodeState::unavailable) ids.push_back(node->id);
  }
  return ids;
}

// The graph a selection table is for, checked: its features and cells must fit.
void check_selection(const Policy& policy, const PolicySelection& selection, const std::vector<GraphInfo>& all) {
  const std::string at = "policy " + policy.source + " at /select/" + selection.op_symbol + "@" + selection.key + ": ";
  const std::string op_symbol = parse_op_symbol(selection.op_symbol).str();
  const c10::DispatchKey key = parse_dispatch_key(selection.key);
  const auto graph = std::find_if(all.begin(), all.end(), [&](const GraphInfo& g) {
    return g.lib_symbol == "aten" && g.op_symbol == op_symbol && g.key == key;
  });
  if (graph == all.end()) {
    throw Error(at + "no override of aten::" + op_symbol + " is registered at " + selection.key +
                ": a table selects among a graph's nodes");
  }
  const std::optional<std::vector<std::string>> features = shape_feature_names(op_symbol);
  std::vector<std::string> ids;
  for (const NodeInfo& node : graph->nodes) ids.push_back(node.id);
  if (const std::string problem = detail::selection_fit_problem(selection.table, "aten::" + op_symbol, selection.key,
                                                                features ? &*features : nullptr, ids);
      !problem.empty()) {
    throw Error(at + problem);
  }
}

const PolicySelection* selection_for(const Policy& policy, const GraphInfo& graph) {
  for (const PolicySelection& selection : policy.select) {
    if (graph.lib_symbol == "aten" && parse_op_symbol(selection.op_symbol).str() == graph.op_symbol &&
        parse_dispatch_key(selection.key) == graph.key) {
      return &selection;
    }
  }
  return nullptr;
}

std::string summary_or_none(const std::optional<SelectionTable>& table) { return table ? summarize(*table) : ""; }

// Applies the rules to one graph, starting from registration order.
GraphOrder order_graph(const Policy& policy, const GraphInfo& graph, const std::vector<Policy>& tuned,
                       std::vector<std::string>& warnings) {
  const std::string label = graph.lib_symbol + "::" + graph.op_symbol + " @ " + c10::toString(graph.key);
  std::vector<const NodeInfo*> nodes;
  for (const NodeInfo& node : graph.nodes) nodes.push_back(&node);
  std::sort(nodes.begin(), nodes.end(),
            [](const NodeInfo* a, const NodeInfo* b) { return a->registration_index < b->registration_index; });

  GraphOrder result{graph.op_symbol, graph.key, {}, {}, {}, {}};
  if (const PolicySelection* selection = selection_for(policy, graph)) {
    result.selection = selection->table;
    result.selection_source = policy.source;
  } else {
    for (const Policy& shipped : tuned) {
      if (const PolicySelection* selection = selection_for(shipped, graph)) {
        result.selection = selection->table;
        result.selection_source = shipped.source;
        break;
      }
    }
  }
  const std::string by = "dropped by policy " + policy.source + ": ";
  std::vector<const NodeInfo*> kept;
  for (const NodeInfo* node : nodes) {
    std::string reason;
    for (size_t i = 0; i < policy.disable.size() && reason.empty(); ++i) {
      if (selects(policy.disable[i], graph, *node)) reason = by + "disable[" + std::to_string(i) + "]";
    }
    if (reason.empty() && policy.has_keep_dsls &&
        std::find(policy.keep_dsls.begin(), policy.keep_dsls.end(), node->dsl) == policy.keep_dsls.end()) {
      reason = by + "keep_dsls";
    }
    if (reason.empty()) {
      kept.push_back(node);
    } else {
      result.dropped.emplace_back(node->id, reason);
    }
  }
  const auto rank = [&](const NodeInfo* node) {
    const auto found = std::find(policy.dsl_priority.begin(), policy.dsl_priority.end(), node->dsl);
    return found - policy.dsl_priority.begin();
  };
  std::stable_sort(kept.begin(), kept.end(), [&](const NodeInfo* a, const NodeInfo* b) { return rank(a) < rank(b); });

  for (const auto& [pattern, entries] : policy.order) {
    if (!op_matches(pattern, graph.op_symbol)) continue;
    std::vector<const NodeInfo*> first;
    for (const std::string& entry : entries) {
      bool named = false;
      for (const NodeInfo* node : kept) {
        if ((node->id == entry || node->dsl == entry) && std::find(first.begin(), first.end(), node) == first.end()) {
          first.push_back(node);
          named = true;
        }
      }
      const bool dropped = std::any_of(result.dropped.begin(), result.dropped.end(),
                                       [&](const auto& pair) { return pair.first == entry; });
      if (!named && dropped) warnings.push_back(label + ": order lists " + entry + ", which an earlier rule dropped");
    }
    for (const NodeInfo* node : kept) {
      if (std::find(first.begin(), first.end(), node) == first.end()) first.push_back(node);
    }
    kept = first;
    break;  // the first matching entry decides
  }

  const NodeInfo* blocker = nullptr;
  for (const NodeInfo* node : kept) {
    result.order.push_back(node->id);
    const bool can_run = node->state != NodeState::disabled && node->state != NodeState::unavailable;
    if (blocker != nullptr && can_run) {
      warnings.push_back(label + ": " + node->id + " is unreachable: it comes after the unconditional node " +
                         blocker->id);
    }
    if (blocker == nullptr && can_run && node->unconditional) blocker = node;
  }
  return result;
}

}  // namespace

Policy parse_policy(std::string_view json_text, std::string source) {
  return PolicyParser(std::move(source)).parse(json_text);
}

Policy load_policy(const std::string& path) {
  // Checked before opening: a FIFO with no writer would block the open forever.
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    throw Error("policy " + path + ": cannot be read: " + std::strerror(errno) + ": give the path of a JSON file");
  }
  if (!S_ISREG(info.st_mode)) {
    const char* kind = S_ISDIR(info.st_mode)    ? "a directory"
                       : S_ISFIFO(info.st_mode) ? "a FIFO"
                       : S_ISCHR(info.st_mode)  ? "a character device"
                       : S_ISBLK(info.st_mode)  ? "a block device"
                       : S_ISSOCK(info.st_mode) ? "a socket"
                                                : "not a regular file";
    throw Error("policy " + path + ": is " + std::string(kind) + ": give the path of a JSON file");
  }
  if (static_cast<size_t>(info.st_size) > kMaxPolicyBytes) {
    throw Error("policy " + path + ": is " + std::to_string(info.st_size) + " bytes: a policy may have " +
                std::to_string(kMaxPolicyBytes) + " at most");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error("policy " + path + ": cannot be read: " + std::strerror(errno));
  std::string text(static_cast<size_t>(info.st_size), '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (file.bad()) throw Error("policy " + path + ": reading it failed: " + std::strerror(errno));
  text.resize(static_cast<size_t>(file.gcount()));
  return parse_policy(text, path);
}

std::string summarize(const SelectionTable& table) {
  std::string text;
  for (const std::string& feature : table.features) text += (text.empty() ? "" : " x ") + feature;
  text += ":";
  for (size_t g = 0; g < table.grids.size(); ++g) {
    const SelectionGrid& grid = table.grids[g];
    text += (g ? ", " : " ") + dtype_name(grid.dtype) + " ";
    for (size_t f = 0; f < grid.edges.size(); ++f) text += (f ? "x" : "") + std::to_string(grid.edges[f].size() + 1);
  }
  text += " buckets";
  if (table.device) text += "; tuned on " + table.device->name + " (" + table.device->capability + ")";
  return text;
}

PolicyPlan plan_policy(const Policy& policy) {
  const std::vector<GraphInfo> all = detail::graph_infos(/*with_overlaps=*/false);
  PolicyChecker(policy, all).check();
  for (const PolicySelection& selection : policy.select) check_selection(policy, selection, all);
  // The shipped tables in force, a policy a file, kept for the graphs the policy gives no table.
  const std::vector<Policy> tuned = detail::tuned_tables();
  for (const Policy& shipped : tuned) {
    for (const PolicySelection& selection : shipped.select) check_selection(shipped, selection, all);
  }
  PolicyPlan plan;
  for (const PolicySelector& selector : policy.disable) {
    if (is_glob(selector.op) && std::none_of(all.begin(), all.end(), [&](const GraphInfo& graph) {
          return op_matches(selector.op, graph.op_symbol);
        })) {
      plan.warnings.push_back("disable: op \"" + selector.op + "\" matches no registered graph");
    }
  }
  for (const GraphInfo& graph : all) {
    GraphOrder order = order_graph(policy, graph, tuned, plan.warnings);
    std::vector<const NodeInfo*> now;
    for (const NodeInfo& node : graph.nodes) {
      if (node.state == NodeState::active) now.push_back(&node);
    }
    std::vector<const NodeInfo*> then;
    for (const std::string& id : order.order) {
      for (const NodeInfo& node : graph.nodes) {
        if (node.id == id) then.push_back(&node);
      }
    }
    GraphChange change{graph.lib_symbol + "::" + graph.op_symbol + " @ " + c10::toString(graph.key), active_ids(now),
                       active_ids(then), summary_or_none(graph.selection), summary_or_none(order.selection)};
    const bool table_changes =
        change.table_before != change.table_after || graph.selection_source != order.selection_source;
    if (change.before != change.after || table_changes) plan.changes.push_back(std::move(change));
    plan.orders.push_back(std::move(order));
  }
  return plan;
}

PolicyPlan apply_policy(const Policy& policy, Apply apply) {
  PolicyPlan plan = plan_policy(policy);
  for (const std::string& warning : plan.warnings) log::warn("policy " + policy.source + ": " + warning);
  set_graph_orders(plan.orders, apply);
  for (const auto& [target, action] : policy.on_error) set_on_error(target, action);  // checked above
  return plan;
}

}  // namespace native_ops
