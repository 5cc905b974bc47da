#pragma once
// Selection tables compiled for the router, and the ops' features functions. Internal to
// lib/src; the public side is native_ops/selection.h.

#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "native_ops/detail/router.h"
#include "native_ops/selection.h"

namespace native_ops::detail {

/// Whether a table tuned on one device model applies on each CUDA device of the process,
/// per device index: 0 not yet checked, 1 it applies, 2 it does not. Written once per
/// device by whichever call gets there first (every writer writes the same value); kept
/// per table in force, across the route lists published with it.
struct DeviceMatches {
  std::array<std::atomic<uint8_t>, 128> state{};
};

/// A table with node ids resolved to indices into one route list.
struct CompiledSelection {
  struct Grid {
    c10::ScalarType dtype;
    size_t features;
    std::array<std::vector<int64_t>, kMaxShapeFeatures> edges;
    std::array<size_t, kMaxShapeFeatures> strides;
    std::vector<int16_t> cells;  // node index, kPickAten or kPickInOrder (a node not in the list)
  };
  std::vector<Grid> grids;
  std::optional<TunedDevice> device;
  std::shared_ptr<DeviceMatches> devices;  // set with `device`
};

/// An op's features function, as registered (never removed: route lists point to it).
struct OpFeatures {
  std::vector<std::string> names;
  bool typed;
  std::unique_ptr<FeaturesFunction> fn;
};

/// What is wrong with the shape of `table` ("" when nothing): feature names, edges, cell
/// counts, margins, duplicate dtypes. Node ids are checked against a graph elsewhere.
std::string selection_problem(const SelectionTable& table);

/// What keeps `table` from selecting among the nodes `ids` of the graph `op` @ `key` ("aten::
/// _softmax", "CPU") whose op declares the features `features` (null: none); "" when
/// nothing does. A cell is named by its place in the table: tables/<dtype>/cells/<index>.
std::string selection_fit_problem(const SelectionTable& table, std::string_view op, std::string_view key,
                                  const std::vector<std::string>* features, const std::vector<std::string>& ids);

struct GraphEntry;
/// Throws native_ops::Error unless `table` fits `graph`: well formed, fits it
/// (selection_fit_problem), and the op's features are in the graph's calling convention.
/// Call with the registry's mutex held.
void check_selection_for(const GraphEntry& graph, const SelectionTable& table);

/// `table` against one route list: cells naming a node not in `nodes` route in order.
/// `devices`: where the table applies, shared by every list compiled from it.
std::shared_ptr<const CompiledSelection> compile_selection(const SelectionTable& table,
                                                           const std::vector<const Node*>& nodes,
                                                           std::shared_ptr<DeviceMatches> devices);

/// The features registered for lib_symbol::op_symbol, or nullptr. Call with the registry's
/// mutex held.
const OpFeatures* find_features(std::string_view lib_symbol, std::string_view op_symbol);

}  // namespace native_ops::detail
