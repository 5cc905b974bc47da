// The goals of a grid run: the memory floor, odd widths, decode calls.
#include <algorithm>
#include <map>
#include <tuple>

#include "native_ops/testing/benchmark.h"

namespace native_ops {

namespace {

constexpr char kUnderFloor[] = "under the floor goal";
constexpr char kOddWidth[] = "odd width over its bytes";
constexpr char kDecodeSlower[] = "decode call slower than aten";

// Op, device, dtype and the grid point with width left out: odd widths look for their
// aligned neighbour among the cells that differ only in it.
using CellGroup = std::tuple<std::string, std::string, std::string, std::vector<std::pair<std::string, int64_t>>>;

struct Cell {
  std::vector<BenchRow*> rows;
  const BenchRow* fastest = nullptr;  // the timed row of the best copy fraction
};

void flag(BenchRow& row, const char* name) {
  if (std::find(row.flags.begin(), row.flags.end(), name) == row.flags.end()) row.flags.push_back(name);
}

void flag(Cell& cell, const char* name) {
  for (BenchRow* row : cell.rows) flag(*row, name);
}

int64_t feature(const BenchRow& row, const std::string& name) {
  for (const auto& [key, value] : row.features) {
    if (key == name) return value;
  }
  return -1;
}

void check_floor(Cell& cell, int64_t width, const GridGoals& goals, GridGoalCheck& check) {
  const BenchRow& fastest = *cell.fastest;
  ++check.floor_cells;
  const bool wide_bf16 = fastest.dtype == "bf16" && width >= goals.bf16_min_width && width <= goals.bf16_max_width;
  const double goal = wide_bf16 ? goals.bf16_fraction : goals.fraction;
  if (fastest.copy_fraction >= goal) return;
  // The same bytes over aten's time, at the same copy bandwidth.
  const double aten = fastest.copy_fraction * fastest.original_gbps / fastest.override_gbps;
  check.under_floor.push_back(
      {fastest.op_symbol, fastest.device, fastest.shape, fastest.node_id, fastest.copy_fraction, aten, goal});
  flag(cell, kUnderFloor);
}

// Against the multiple of 8 below `width` or above it, whichever the run timed.
void check_odd_width(Cell& cell, int64_t width, const std::map<int64_t, Cell>& by_width, const GridGoals& goals,
                     GridGoalCheck& check) {
  for (const int64_t aligned : {width / 8 * 8, (width / 8 + 1) * 8}) {
    const auto neighbour = by_width.find(aligned);
    if (aligned == 0 || neighbour == by_width.end() || !neighbour->second.fastest) continue;
    ++check.odd_cells;
    const double aligned_ns = neighbour->second.fastest->override_timing().median_ns;
    const double allowed_ns = aligned_ns * static_cast<double>((width + 7) / 8 * 8) / static_cast<double>(aligned) *
                              (1 + goals.odd_width_margin);
    const double ns = cell.fastest->override_timing().median_ns;
    if (ns > allowed_ns) {
      check.odd_over.push_back(
          {cell.fastest->op_symbol, cell.fastest->device, cell.fastest->shape, ns, aligned, aligned_ns, allowed_ns});
      flag(cell, kOddWidth);
    }
    return;
  }
}

void check_decode(BenchRow& row, const GridGoals& goals, GridGoalCheck& check) {
  const int64_t rows = feature(row, "rows");
  if (!row.accepted || rows < 0 || rows > goals.decode_rows || row.host_routed_ns <= 0) return;
  ++check.decode_calls;
  const double routed_ns = std::max(row.routed.median_ns, row.host_routed_ns);
  const double original_ns = std::max(row.original.median_ns, row.host_original_ns);
  if (routed_ns <= original_ns * (1 + goals.decode_margin)) return;
  check.decode_slower.push_back({row.node_id, row.device, row.shape, routed_ns, original_ns});
  flag(row, kDecodeSlower);
}

}  // namespace

GridGoalCheck check_grid_goals(BenchReport& report, const GridGoals& goals) {
  GridGoalCheck check;
  std::map<CellGroup, std::map<int64_t, Cell>> groups;  // width (-1: none) -> cell
  for (BenchRow& row : report.rows) {
    if (row.features.empty() || !row.fastest.empty() || !row.timed) continue;
    check_decode(row, goals, check);
    CellGroup group{row.op_symbol, row.device, row.dtype, {}};
    for (const auto& f : row.features) {
      if (f.first != "width") std::get<3>(group).push_back(f);
    }
    Cell& cell = groups[group][feature(row, "width")];
    cell.rows.push_back(&row);
    if (row.override_timing().median_ns > 0 && (!cell.fastest || row.copy_fraction > cell.fastest->copy_fraction)) {
      cell.fastest = &row;
    }
  }
  for (auto& [group, by_width] : groups) {
    for (auto& [width, cell] : by_width) {
      if (!cell.fastest || cell.fastest->bytes < goals.min_bytes ||
          cell.fastest->flops > goals.max_flops_per_byte * cell.fastest->bytes) {
        continue;
      }
      check_floor(cell, width, goals, check);
      if (width > 0 && width % 8 != 0) check_odd_width(cell, width, by_width, goals, check);
    }
  }
  return check;
}

}  // namespace native_ops
