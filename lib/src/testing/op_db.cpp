// The op database: storage, validation, and assert_close's default tolerances.
#include "native_ops/testing/op_db.h"

#include <algorithm>
#include <mutex>

#include <ATen/core/dispatch/Dispatcher.h>

#include "native_ops/error.h"
#include "native_ops/names.h"
#include "testing/builtin_entries.h"

namespace native_ops {

Tolerance default_tolerance(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::Half: return {1e-3, 1e-5};
    case c10::ScalarType::BFloat16: return {1.6e-2, 1e-5};
    case c10::ScalarType::Float: return {1.3e-6, 1e-5};
    case c10::ScalarType::Double: return {1e-7, 1e-7};
    case c10::ScalarType::ComplexFloat: return {1.3e-6, 1e-5};
    case c10::ScalarType::ComplexDouble: return {1e-7, 1e-7};
    default: return {0, 0};
  }
}

std::string_view to_string(SampleClass sample_class) {
  switch (sample_class) {
    case SampleClass::typical: return "typical";
    case SampleClass::empty: return "empty";
    case SampleClass::zero_dim: return "0-dim";
    case SampleClass::one_element: return "one-element";
    case SampleClass::odd_sizes: return "odd-sizes";
    case SampleClass::large: return "large";
    case SampleClass::transposed: return "transposed";
    case SampleClass::step_sliced: return "step-sliced";
    case SampleClass::expanded: return "expanded";
    case SampleClass::extreme_values: return "extreme-values";
  }
  return "?";
}

const std::vector<SampleClass>& all_sample_classes() {
  static const std::vector<SampleClass> all = {
      SampleClass::typical,   SampleClass::empty,         SampleClass::zero_dim,   SampleClass::one_element,
      SampleClass::odd_sizes, SampleClass::large,         SampleClass::transposed, SampleClass::step_sliced,
      SampleClass::expanded,  SampleClass::extreme_values};
  return all;
}

Tolerance OpEntry::tolerance(c10::ScalarType dtype) const {
  const auto found = tolerances.find(dtype);
  return found != tolerances.end() ? found->second : default_tolerance(dtype);
}

bool OpEntry::tagged(std::string_view dsl) const { return std::find(dsls.begin(), dsls.end(), dsl) != dsls.end(); }

namespace {

struct OpDatabase {
  std::mutex mutex;
  std::vector<OpEntry> entries;
};

OpDatabase& database() {
  static OpDatabase* instance = new OpDatabase;  // read by tools until exit
  return *instance;
}

void check_entry(const OpEntry& entry, const std::vector<OpEntry>& existing) {
  const std::string what = "op database entry for '" + entry.op_symbol + "'";
  const OpSymbol symbol = parse_op_symbol(entry.op_symbol);
  if (!c10::Dispatcher::singleton().findSchema({"aten::" + symbol.name, symbol.overload})) {
    throw Error(what + ": " + unknown_op_message("aten", symbol));
  }
  if (entry.dsls.empty()) throw Error(what + " has no dsl tag: list the DSLs whose overrides it judges");
  if (entry.devices.empty()) throw Error(what + " lists no device");
  if (entry.dtypes.empty()) throw Error(what + " lists no dtype");
  if (!entry.samples) throw Error(what + " has no sample generator");
  if (!entry.cost) throw Error(what + " has no bytes/FLOPs model (cost)");
  if (!entry.bench_cases) throw Error(what + " has no bench cases");
  for (const OpEntry& other : existing) {
    if (other.op_symbol != symbol.str()) continue;
    for (const std::string& dsl : entry.dsls) {
      if (other.tagged(dsl)) {
        throw Error(what + ": op '" + symbol.str() + "' already has an entry for dsl '" + dsl +
                    "': extend that entry's samples instead of adding a second one");
      }
    }
  }
}

// The built-in entries come first, whoever registers or reads the database first.
thread_local bool registering_builtins = false;

void ensure_builtin_entries() {
  static std::once_flag once;
  if (registering_builtins) return;
  std::call_once(once, [] {
    registering_builtins = true;
    try {
      detail::register_builtin_op_entries();
    } catch (...) {
      registering_builtins = false;
      throw;
    }
    registering_builtins = false;
  });
}

}  // namespace

void register_op_entry(OpEntry entry) {
  ensure_builtin_entries();
  OpDatabase& db = database();
  entry.op_symbol = parse_op_symbol(entry.op_symbol).str();
  std::lock_guard<std::mutex> lock(db.mutex);
  check_entry(entry, db.entries);
  db.entries.push_back(std::move(entry));
}

std::vector<OpEntry> op_entries() {
  ensure_builtin_entries();
  OpDatabase& db = database();
  std::lock_guard<std::mutex> lock(db.mutex);
  return db.entries;
}

std::vector<OpEntry> op_entries_for(std::string_view op_symbol, std::string_view dsl) {
  const std::string wanted = parse_op_symbol(op_symbol).str();
  std::vector<OpEntry> found;
  for (OpEntry& entry : op_entries()) {
    if (entry.op_symbol == wanted && entry.tagged(dsl)) found.push_back(std::move(entry));
  }
  return found;
}

ShapeGrid row_op_grid(
    c10::Device device,
    std::function<torch::jit::Stack(int64_t rows, int64_t width, c10::ScalarType dtype, c10::Device device)> make) {
  ShapeGrid grid;
  if (device.is_cpu()) {
    grid.axes = {{"rows", {1, 7, 64, 1024}}, {"width", {127, 768, 4096, 50257}}};
    grid.max_bytes = 256.0 * (1 << 20);
  } else {
    grid.axes = {
        {"rows", {1, 8, 32, 64, 256, 2048, 8192, 32768}},
        {"width", {127, 768, 2048, 4096, 4097, 5120, 8192, 11008, 14336, 32000, 50257, 65536, 128256, 151936, 256000}}};
  }
  grid.make_arguments = [make = std::move(make)](const std::vector<int64_t>& point, c10::ScalarType dtype,
                                                 c10::Device device) {
    return make(point[0], point[1], dtype, device);
  };
  return grid;
}

}  // namespace native_ops
