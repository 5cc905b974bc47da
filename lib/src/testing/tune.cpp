// Tuning: grid measurements -> per-cell winners -> buckets -> a version-2 policy.
#include "native_ops/testing/tune.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <torch/version.h>
#include <nlohmann/json.hpp>

#include "native_ops/dsl.h"
#include "native_ops/error.h"
#include "native_ops/names.h"
#include "native_ops/selection.h"

namespace native_ops {

namespace {

// Winners and margins over a grid, the last feature varying fastest.
struct Cells {
  std::vector<size_t> dims;
  std::vector<std::string> winners;  // "" where not measured
  std::vector<double> margins;
};

// The flat index of `index` (one entry per dimension) in a row-major grid of `dims`.
size_t flat(const std::vector<size_t>& dims, const std::vector<size_t>& index) {
  size_t at = 0;
  for (size_t d = 0; d < dims.size(); ++d) at = at * dims[d] + index[d];
  return at;
}

std::vector<size_t> unflat(const std::vector<size_t>& dims, size_t at) {
  std::vector<size_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = at % dims[d];
    at /= dims[d];
  }
  return index;
}

// The cells whose index along `axis` is `i`, in row-major order of the other axes.
Cells slice(const Cells& cells, size_t axis, size_t i) {
  Cells out;
  for (size_t at = 0; at < cells.winners.size(); ++at) {
    if (unflat(cells.dims, at)[axis] != i) continue;
    out.winners.push_back(cells.winners[at]);
    out.margins.push_back(cells.margins[at]);
  }
  return out;
}

bool compatible(const Cells& a, const Cells& b) {
  for (size_t p = 0; p < a.winners.size(); ++p) {
    if (!a.winners[p].empty() && !b.winners[p].empty() && a.winners[p] != b.winners[p]) return false;
  }
  return true;
}

// Folds `b` into the bucket `a`: unknown cells take b's winner; margins keep the smallest.
void absorb(Cells& a, const Cells& b) {
  for (size_t p = 0; p < a.winners.size(); ++p) {
    if (b.winners[p].empty()) continue;
    if (a.winners[p].empty()) {
      a.winners[p] = b.winners[p];
      a.margins[p] = b.margins[p];
    } else {
      a.margins[p] = std::min(a.margins[p], b.margins[p]);
    }
  }
}

// An edge between grid values lo < hi: their geometric middle, so that lo falls below it
// and hi on or above it.
int64_t edge_between(int64_t lo, int64_t hi) {
  const auto middle = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(lo) * static_cast<double>(hi))));
  return std::clamp(middle, lo + 1, hi);
}

struct CellKey {
  std::string op_symbol;
  std::string device;
  std::string dtype;
  bool operator<(const CellKey& o) const {
    return std::tie(op_symbol, device, dtype) < std::tie(o.op_symbol, o.device, o.dtype);
  }
};

std::string key_of(const std::string& device) { return device.rfind("cuda", 0) == 0 ? "CUDA" : "CPU"; }

}  // namespace

SelectionGrid merge_into_buckets(c10::ScalarType dtype, const std::vector<std::vector<int64_t>>& axis_values,
                                 const std::vector<std::string>& winners, const std::vector<double>& margins) {
  Cells cells;
  size_t total = 1;
  for (const auto& values : axis_values) {
    cells.dims.push_back(values.size());
    total *= values.size();
  }
  if (winners.size() != total || margins.size() != total) {
    throw Error("merge_into_buckets: " + std::to_string(winners.size()) + " winners and " +
                std::to_string(margins.size()) + " margins for a grid of " + std::to_string(total) + " points");
  }
  cells.winners = winners;
  cells.margins = margins;
  SelectionGrid grid;
  grid.dtype = dtype;
  for (size_t axis = 0; axis < axis_values.size(); ++axis) {
    std::vector<Cells> buckets;
    std::vector<int64_t> edges;
    for (size_t i = 0; i < cells.dims[axis]; ++i) {
      Cells next = slice(cells, axis, i);
      if (!buckets.empty() && compatible(buckets.back(), next)) {
        absorb(buckets.back(), next);
        continue;
      }
      if (!buckets.empty()) edges.push_back(edge_between(axis_values[axis][i - 1], axis_values[axis][i]));
      buckets.push_back(std::move(next));
    }
    Cells merged;
    merged.dims = cells.dims;
    merged.dims[axis] = buckets.size();
    std::vector<size_t> others = cells.dims;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(axis));
    for (size_t at = 0; at < total / cells.dims[axis] * buckets.size(); ++at) {
      std::vector<size_t> index = unflat(merged.dims, at);
      const size_t bucket = index[axis];
      index.erase(index.begin() + static_cast<std::ptrdiff_t>(axis));
      const size_t p = others.empty() ? 0 : flat(others, index);
      merged.winners.push_back(buckets[bucket].winners[p]);
      merged.margins.push_back(buckets[bucket].margins[p]);
    }
    total = merged.winners.size();
    cells = std::move(merged);
    grid.edges.push_back(std::move(edges));
  }
  for (size_t at = 0; at < cells.winners.size(); ++at) {
    if (cells.winners[at].empty()) {  // a bucket with no measured point: aten, which is never slower
      cells.winners[at] = "aten";
      cells.margins[at] = 1.0;
    }
  }
  grid.cells = std::move(cells.winners);
  grid.margins = std::move(cells.margins);
  return grid;
}

TuneResult tune(const TuneOptions& options, const BenchProgress& progress) {
  BenchOptions bench;
  bench.op_symbol = options.op_symbol;
  bench.dsl = options.dsl;
  bench.devices = options.devices;
  bench.dtypes = options.dtypes;
  bench.grid = true;
  bench.seconds_total = options.seconds_budget;
  bench.host_times = false;
  TuneResult result;
  result.measurements = run_benchmarks(bench, progress);

  // Per (op, device, dtype): per grid point, the best node that beats aten.
  struct Best {
    std::string winner = "aten";
    double margin = 1.0;
  };
  std::map<CellKey, std::map<std::vector<int64_t>, Best>> points;
  std::map<CellKey, std::vector<std::string>> feature_names;
  std::set<std::string> ops;
  for (const BenchRow& row : result.measurements.rows) {
    ops.insert(row.op_symbol);
    if (row.features.empty()) continue;
    const CellKey key{row.op_symbol, row.device, row.dtype};
    std::vector<int64_t> point;
    std::vector<std::string> names;
    for (const auto& [name, value] : row.features) {
      names.push_back(name);
      point.push_back(value);
    }
    feature_names[key] = names;
    Best& best = points[key][point];
    if (row.accepted && row.timed && row.speedup_low > 1.0 && row.speedup > best.margin)
      best = {row.node_id, row.speedup};
  }
  for (const auto& [key, measured] : points) {
    const std::optional<std::vector<std::string>> names = shape_feature_names(key.op_symbol);
    if (!names) {
      result.skipped.push_back(key.op_symbol + ": the op declares no shape features (register_shape_features)");
      continue;
    }
    if (*names != feature_names[key]) {
      result.skipped.push_back(key.op_symbol + ": the op database's grid axes differ from the op's features");
      continue;
    }
    std::vector<std::set<int64_t>> seen(names->size());
    for (const auto& [point, best] : measured) {
      for (size_t f = 0; f < point.size(); ++f) seen[f].insert(point[f]);
    }
    std::vector<std::vector<int64_t>> axis_values;
    size_t total = 1;
    for (const auto& values : seen) {
      axis_values.emplace_back(values.begin(), values.end());
      total *= values.size();
    }
    std::vector<size_t> dims;
    for (const auto& values : axis_values) dims.push_back(values.size());
    std::vector<std::string> winners(total);
    std::vector<double> margins(total, 1.0);
    for (const auto& [point, best] : measured) {
      std::vector<size_t> index;
      for (size_t f = 0; f < point.size(); ++f) {
        index.push_back(static_cast<size_t>(std::lower_bound(axis_values[f].begin(), axis_values[f].end(), point[f]) -
                                            axis_values[f].begin()));
      }
      winners[flat(dims, index)] = best.winner;
      margins[flat(dims, index)] = best.margin;
    }
    const std::string graph_key = key_of(key.device);
    auto table = std::find_if(result.tables.begin(), result.tables.end(), [&](const PolicySelection& s) {
      return s.op_symbol == key.op_symbol && s.key == graph_key;
    });
    if (table == result.tables.end()) {
      PolicySelection selection{key.op_symbol, graph_key, {}};
      selection.table.features = *names;
      if (graph_key == "CUDA") {
        const int index = key.device.size() > 5 ? std::stoi(key.device.substr(5)) : 0;
        selection.table.device = loaded_cuda_device(index);
      }
      selection.table.tuned_with.emplace_back("torch", TORCH_VERSION);
      for (const Dsl* dsl : dsls()) {
        if (dsl->runtime_available())
          selection.table.tuned_with.emplace_back(std::string(dsl->name()), dsl->runtime_version());
      }
      result.tables.push_back(std::move(selection));
      table = result.tables.end() - 1;
    }
    table->table.grids.push_back(merge_into_buckets(parse_dtype(key.dtype), axis_values, winners, margins));
  }
  for (const std::string& op : ops) {
    if (std::none_of(result.tables.begin(), result.tables.end(),
                     [&](const PolicySelection& s) { return s.op_symbol == op; }) &&
        std::none_of(result.skipped.begin(), result.skipped.end(),
                     [&](const std::string& s) { return s.rfind(op + ":", 0) == 0; })) {
      result.skipped.push_back(op + ": the op database has no shape grid for it");
    }
  }
  if (result.tables.empty()) {
    std::string why;
    for (const std::string& line : result.skipped) why += "; " + line;
    throw Error("nothing to tune: no op in the selection has both shape features and a grid" + why);
  }
  return result;
}

std::string selection_policy_json(const std::vector<PolicySelection>& tables, const std::string& description) {
  nlohmann::ordered_json doc;
  doc["version"] = 2;
  doc["description"] = description;
  nlohmann::ordered_json select = nlohmann::ordered_json::object();
  for (const PolicySelection& selection : tables) {
    const SelectionTable& table = selection.table;
    nlohmann::ordered_json entry;
    entry["features"] = table.features;
    if (table.device) entry["device"] = {{"name", table.device->name}, {"capability", table.device->capability}};
    nlohmann::ordered_json tuned = nlohmann::ordered_json::object();
    for (const auto& [what, version] : table.tuned_with) tuned[what] = version;
    entry["tuned_with"] = tuned;
    nlohmann::ordered_json grids = nlohmann::ordered_json::object();
    for (const SelectionGrid& grid : table.grids) {
      nlohmann::ordered_json edges = nlohmann::ordered_json::object();
      for (size_t f = 0; f < table.features.size(); ++f) edges[table.features[f]] = grid.edges[f];
      std::vector<double> margins;
      for (const double margin : grid.margins) margins.push_back(std::round(margin * 1000) / 1000);
      grids[dtype_name(grid.dtype)] = {{"edges", edges}, {"cells", grid.cells}, {"margins", margins}};
    }
    entry["tables"] = grids;
    select[selection.op_symbol + "@" + selection.key] = entry;
  }
  doc["select"] = select;
  return doc.dump(1);
}

}  // namespace native_ops
