#pragma once
// Conformance sweeps: every override judged against the original kernel on the op
// database's samples. `native-ops test` and the gtest suite both run these.
//
// For each node under test, on each sample of its op's entries for its DSL:
//  - its cond accepts the samples meant for it and declines the others;
//  - with the graph routed through that node alone, the call fires it exactly when its
//    cond accepts ("not exercised": no sample at all was meant for it);
//  - the outputs match the reference (the original kernel, routing bypassed) in count,
//    dtype, shape, device, strides, and values within the dtype's tolerance with NaN in
//    the same places; where the entry allows, also a float64 run of the original kernel;
//  - an in-place op returns self, with the same storage;
//  - every output element is written (new outputs start as NaN), and nothing but the
//    outputs is written: every input sits in a guarded buffer that is compared after;
//  - for a differentiable op, the gradients match the reference gradients (within twice
//    the tolerance: backward formulas amplify the outputs' last-bit rounding);
//  - error samples raise the expected error through the router.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>
#include "native_ops/export.h"

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "native_ops/testing/op_db.h"

namespace native_ops {

/// Which overrides a sweep covers; empty fields cover everything.
struct SweepOptions {
  std::string dsl;
  std::string op_symbol;
  /// Default: every device type the node's key is for (CPU nodes on CPU, CUDA on CUDA).
  std::vector<c10::DeviceType> devices;
  std::vector<c10::ScalarType> dtypes;  // default: every dtype of the entry
  /// This process runs units k (0-based), k + n, k + 2n, ...; a unit is one node on one device.
  uint32_t shard_index = 0;
  uint32_t shard_count = 1;
};

/// Reads NATIVE_OPS_RESTRICT_TO_DSL (the counterpart of OPINFO_RESTRICT_TO_DSL): the one
/// DSL whose overrides sweeps and the gtest suite may judge; nullopt when unset. Throws
/// native_ops::Error naming the registered DSLs when it names none of them.
NATIVE_OPS_API std::optional<std::string> restrict_to_dsl_from_env();

enum class Outcome { passed, failed, skipped };
NATIVE_OPS_API std::string_view to_string(Outcome outcome);

/// One check that failed on one sample.
struct Mismatch {
  std::string check;                 // "cond", "fired", "count", "dtype", "shape", "device", "strides",
                                     // "values", "float64", "in-place", "guard", "gradient", "error"
  std::string message;               // what differs, in words
  double max_abs_error = 0;          // "values", "float64", "gradient": largest |routed - reference|
  double max_rel_error = 0;          //   and largest |routed - reference| / |reference|
  std::vector<int64_t> first_index;  // first mismatching element, when there is one
};

/// The verdict on one node and one sample.
struct SampleResult {
  std::string node_id;
  std::string dsl;
  std::string op_symbol;
  std::string device;        // "cpu", "cuda:0"
  std::string dtype;         // "f32"; empty for error samples
  std::string sample;        // the sample's description
  std::string sample_class;  // to_string(SampleClass), "error", or "coverage"
  bool meant_for = false;    // the cond should accept it
  Outcome outcome = Outcome::passed;
  std::string skip_reason;
  std::vector<Mismatch> mismatches;  // empty when passed
  double seconds = 0;
};

/// One node on one device: the unit of sharding and of progress.
struct SweepUnit {
  std::string node_id;
  std::string dsl;
  std::string op_symbol;
  c10::DeviceType device = c10::DeviceType::CPU;

  /// The device its samples live on: "cpu", or device 0 of the type ("cuda:0").
  c10::Device target() const { return device == c10::DeviceType::CPU ? c10::Device(device) : c10::Device(device, 0); }
};

/// The units `options` selects, in a stable order, before sharding is applied. Throws
/// native_ops::Error for a dsl or op that names nothing registered, or a device
/// ("cuda") that this process cannot use (with why).
NATIVE_OPS_API std::vector<SweepUnit> plan_sweep(const SweepOptions& options);
/// The units of shard `options.shard_index` of `options.shard_count`.
NATIVE_OPS_API std::vector<SweepUnit> shard(const std::vector<SweepUnit>& units, const SweepOptions& options);

/// Called after each (unit, dtype) step: its index, the number of steps, and what ran.
using SweepProgress = std::function<void(size_t done, size_t total, const std::string& what)>;

/// Runs the units: every sample of every dtype, then the error samples, and a "coverage"
/// result that fails when no sample was meant for the node. Requires init().
NATIVE_OPS_API std::vector<SampleResult> run_sweep(const std::vector<SweepUnit>& units, const SweepOptions& options,
                                                   const SweepProgress& progress = {});

}  // namespace native_ops
