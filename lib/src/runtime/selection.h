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
  // Per CUDA device index: 0 not yet checked, 1 matches `device`, 2 does not. Written once
  // per device by whichever call gets there first; every writer writes the same value.
  mutable std::array<std::atomic<uint8_t>, 128> device_state{};
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

struct GraphEntry;
/// Throws native_ops::Error unless `table` fits `graph`: well formed, the graph's op has
/// features of the same names in the graph's calling convention, every cell names a node
/// of the graph or "aten". Call with the registry's mutex held.
void check_selection_for(const GraphEntry& graph, const SelectionTable& table);

/// `table` against one route list: cells naming a node not in `nodes` route in order.
std::shared_ptr<const CompiledSelection> compile_selection(const SelectionTable& table,
                                                           const std::vector<const Node*>& nodes);

/// The features registered for lib_symbol::op_symbol, or nullptr. Call with the registry's
/// mutex held.
const OpFeatures* find_features(std::string_view lib_symbol, std::string_view op_symbol);

}  // namespace native_ops::detail
