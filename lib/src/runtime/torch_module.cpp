// The loadable module. Loading it into a process that runs libtorch 2.11, e.g. with
// torch.ops.load_library(path) from Python, calls native_ops::init() and adds
// torch.ops.native_ops.status(), which returns the graphs and their counters as JSON
// (graphs_json in native_ops/report.h).
#include <iostream>

#include <torch/library.h>

#include "native_ops/native_ops.h"
#include "native_ops/report.h"

namespace {

// A library cannot fail its own loading cleanly: report, and leave everything uninstalled.
const bool activated = [] {
  try {
    native_ops::init();
    return true;
  } catch (const std::exception& e) {
    std::cerr << "native-ops: not activated: " << e.what() << "\n";
    return false;
  }
}();

}  // namespace

TORCH_LIBRARY(native_ops, m) {
  m.def("status() -> str", [] { return native_ops::graphs_json(native_ops::graphs()); });
}
