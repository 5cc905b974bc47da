#pragma once
// The data of a selection table (selection.h), as policies (policy.h) carry it and the
// registry (registry.h) reports it.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/ScalarType.h>

namespace native_ops {

/// One dtype's buckets: along each feature, ascending edges cut the line into
/// edges.size() + 1 buckets, bucket i being [edges[i-1], edges[i]) (unbounded at both ends);
/// cells hold one entry per combination of buckets, the last feature varying fastest.
struct SelectionGrid {
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  std::vector<std::vector<int64_t>> edges;  // one list per feature
  std::vector<std::string> cells;           // a node id of the graph, or "aten"
  std::vector<double> margins;              // optional: aten's time / the chosen one's, as tuned
};

/// The device a table was tuned on. A call on a CUDA device of another name or compute
/// capability is routed in order, as without a table.
struct TunedDevice {
  std::string name;        // "NVIDIA H200"
  std::string capability;  // "9.0"

  /// The same device model: name and compute capability.
  bool operator==(const TunedDevice& other) const { return name == other.name && capability == other.capability; }
  bool operator!=(const TunedDevice& other) const { return !(*this == other); }
};

/// A selection table for one graph.
struct SelectionTable {
  std::vector<std::string> features;  // the op's feature names, in its order
  std::optional<TunedDevice> device;
  std::vector<std::pair<std::string, std::string>> tuned_with;  // ("torch", "2.11.0"), ...: informative
  std::vector<SelectionGrid> grids;
};

}  // namespace native_ops
