// The memory-floor goals of a grid run: which cells' fastest override misses them.
#include <algorithm>
#include <map>
#include <tuple>

#include "native_ops/testing/benchmark.h"

namespace native_ops {

namespace {

constexpr char kUnderFloor[] = "under the floor goal";
constexpr char kOddWidth[] = "odd width over its bytes";

// A cell: op, device, dtype and the grid point, width left out (odd widths look for their
// aligned neighbour among the cells that differ only in it).
using Row = std::tuple<std::string, std::string, std::string, std::vector<std::pair<std::string, int64_t>>>;

struct Cell {
  std::vector<BenchRow*> rows;
  const BenchRow* fastest = nullptr;  // the timed row of the best copy fraction
  int64_t width = -1;                 // the "width" feature, -1 without one
};

double override_ns(const BenchRow& row) { return (row.accepted ? row.routed : row.impl).median_ns; }

void flag(Cell& cell, const char* name) {
  for (BenchRow* row : cell.rows) {
    if (std::find(row->flags.begin(), row->flags.end(), name) == row->flags.end()) row->flags.push_back(name);
  }
}

}  // namespace

FloorCheck check_floor(BenchReport& report, const FloorGoal& goal) {
  std::map<std::string, double> copy_gbps;
  for (const BenchDevice& d : report.devices) copy_gbps[d.device] = d.copy_gbps;
  std::map<Row, std::map<int64_t, Cell>> cells;  // (op, device, dtype, other features) -> width -> cell
  for (BenchRow& row : report.rows) {
    if (row.features.empty() || !row.fastest.empty()) continue;
    Row key{row.op_symbol, row.device, row.dtype, {}};
    int64_t width = -1;
    for (const auto& feature : row.features) {
      if (feature.first == "width") {
        width = feature.second;
      } else {
        std::get<3>(key).push_back(feature);
      }
    }
    Cell& cell = cells[key][width];
    cell.width = width;
    cell.rows.push_back(&row);
    if (row.timed && override_ns(row) > 0 && (!cell.fastest || row.copy_fraction > cell.fastest->copy_fraction)) {
      cell.fastest = &row;
    }
  }

  FloorCheck check;
  for (auto& [key, by_width] : cells) {
    for (auto& [width, cell] : by_width) {
      const BenchRow* fastest = cell.fastest;
      if (!fastest || fastest->bytes < goal.min_bytes || fastest->flops > goal.max_flops_per_byte * fastest->bytes) {
        continue;
      }
      ++check.cells;
      const bool wide_bf16 = fastest->dtype == "bf16" && width >= goal.bf16_min_width && width <= goal.bf16_max_width;
      const double fraction_goal = wide_bf16 ? goal.bf16_fraction : goal.fraction;
      if (fastest->copy_fraction < fraction_goal) {
        const auto copy = copy_gbps.find(fastest->device);
        const double aten = copy == copy_gbps.end() || copy->second <= 0 ? 0 : fastest->original_gbps / copy->second;
        check.under.push_back({fastest->op_symbol, fastest->device, fastest->shape, fastest->node_id,
                               fastest->copy_fraction, aten, fraction_goal});
        flag(cell, kUnderFloor);
      }
      if (width < 0 || width % 8 == 0) continue;
      // The multiple of 8 below or above it, whichever the run timed.
      for (const int64_t aligned : {width / 8 * 8, (width / 8 + 1) * 8}) {
        const auto neighbour = by_width.find(aligned);
        if (aligned == 0 || neighbour == by_width.end() || !neighbour->second.fastest) continue;
        ++check.odd_cells;
        const double aligned_ns = override_ns(*neighbour->second.fastest);
        const double allowed_ns = aligned_ns * static_cast<double>((width + 7) / 8 * 8) / static_cast<double>(aligned) *
                                  (1 + goal.odd_width_margin);
        const double ns = override_ns(*fastest);
        if (ns > allowed_ns) {
          check.odd_over.push_back(
              {fastest->op_symbol, fastest->device, fastest->shape, ns, aligned, aligned_ns, allowed_ns});
          flag(cell, kOddWidth);
        }
        break;
      }
    }
  }
  return check;
}

}  // namespace native_ops
