// libFuzzer target: the benchmark report reader (`native-ops bench --report`). Any input
// must be read or refused with native_ops::Error; a report that is read must check against
// the grid goals, and write back JSON that reads back to the same JSON.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "native_ops/error.h"
#include "native_ops/testing/benchmark.h"
#include "native_ops/testing/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  native_ops::BenchReport report;
  try {
    report = native_ops::parse_bench_report(text, "fuzz input");
  } catch (const native_ops::Error&) {
    return 0;
  }
  native_ops::check_grid_goals(report);
  const std::string written = native_ops::bench_json(report);
  if (native_ops::bench_json(native_ops::parse_bench_report(written, "written back")) != written) std::abort();
  return 0;
}
