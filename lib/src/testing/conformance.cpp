// Conformance sweeps: every selected node, on every sample of its op database entries,
// against the original kernel. See conformance.h for the checks.
#include "native_ops/testing/conformance.h"
#include "native_ops/detail/thread_routing.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>

#include <ATen/Context.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/Tensor.h>
#include <torch/csrc/autograd/autograd.h>

#include "native_ops/dsl.h"
#include "native_ops/error.h"
#include "native_ops/names.h"
#include "native_ops/node_access.h"
#include "native_ops/registry.h"
#include "native_ops/testing/samples.h"
#include "testing/guarded_arguments.h"
#include "testing/tensor_compare.h"

namespace native_ops {

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::passed: return "passed";
    case Outcome::failed: return "failed";
    case Outcome::skipped: return "skipped";
  }
  return "?";
}

std::optional<std::string> restrict_to_dsl_from_env() {
  const char* value = std::getenv("NATIVE_OPS_RESTRICT_TO_DSL");
  if (value == nullptr || *value == '\0') return std::nullopt;
  if (find_dsl(value) == nullptr) {
    throw Error("NATIVE_OPS_RESTRICT_TO_DSL=" + std::string(value) + ": " + unknown_dsl_message(value) +
                ", or unset it");
  }
  return std::string(value);
}

namespace {

using Clock = std::chrono::steady_clock;

std::string error_text(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return c10_error->what_without_backtrace();
  return e.what();
}

// New tensors start as NaN (integers: their largest value) while alive, so that an
// element an impl never writes shows up as a value mismatch. This is PyTorch's own
// deterministic fill of uninitialised memory, switched on in warn-only mode.
class FillUninitializedMemory {
 public:
  FillUninitializedMemory()
      : was_on_(at::globalContext().deterministicAlgorithms()),
        was_warn_only_(at::globalContext().deterministicAlgorithmsWarnOnly()),
        was_filling_(at::globalContext().deterministicFillUninitializedMemory()) {
    at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/true);
    at::globalContext().setDeterministicFillUninitializedMemory(true);
  }
  ~FillUninitializedMemory() {
    at::globalContext().setDeterministicAlgorithms(was_on_, was_warn_only_);
    at::globalContext().setDeterministicFillUninitializedMemory(was_filling_);
  }

 private:
  bool was_on_;
  bool was_warn_only_;
  bool was_filling_;
};

std::optional<c10::DeviceType> device_type_of(c10::DispatchKey key) {
  if (key == c10::DispatchKey::CPU) return c10::DeviceType::CPU;
  if (key == c10::DispatchKey::CUDA) return c10::DeviceType::CUDA;
  return std::nullopt;
}

bool contains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

std::vector<c10::ScalarType> dtypes_to_run(const OpEntry& entry, const SweepOptions& options) {
  if (options.dtypes.empty()) return entry.dtypes;
  std::vector<c10::ScalarType> chosen;
  for (c10::ScalarType dtype : entry.dtypes) {
    if (std::find(options.dtypes.begin(), options.dtypes.end(), dtype) != options.dtypes.end()) chosen.push_back(dtype);
  }
  return chosen;
}

bool has_device(const OpEntry& entry, c10::DeviceType device) {
  return std::find(entry.devices.begin(), entry.devices.end(), device) != entry.devices.end();
}

// A result for `unit`, not yet judged.
SampleResult result_for(const SweepUnit& unit, std::string dtype, std::string sample, std::string sample_class) {
  SampleResult result;
  result.node_id = unit.node_id;
  result.dsl = unit.dsl;
  result.op_symbol = unit.op_symbol;
  result.device = unit.target().str();
  result.dtype = std::move(dtype);
  result.sample = std::move(sample);
  result.sample_class = std::move(sample_class);
  return result;
}

// The calls one node is judged by; results land in `results`.
class NodeJudge {
 public:
  NodeJudge(const SweepUnit& unit, const NodeHandle& node, std::vector<SampleResult>& results)
      : unit_(unit), node_(node), op_(node.op()), schema_(op_.schema()), results_(results) {}

  // Returns whether the sample was meant for the node.
  bool judge(const OpEntry& entry, const Sample& sample, c10::Device device, c10::ScalarType dtype);
  void judge_error(const ErrorSample& sample);

 private:
  SampleResult start(std::string dtype, std::string sample, std::string sample_class) const {
    return result_for(unit_, std::move(dtype), std::move(sample), std::move(sample_class));
  }
  void finish(SampleResult result, Clock::time_point started) {
    result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    result.outcome = result.mismatches.empty() ? Outcome::passed : Outcome::failed;
    results_.push_back(std::move(result));
  }
  void compare_outputs(const OpEntry& entry, const torch::jit::Stack& routed, const torch::jit::Stack& reference,
                       SampleResult& result) const;
  void check_in_place(const torch::jit::Stack& arguments, SampleResult& result) const;
  void compare_with_float64(const OpEntry& entry, const torch::jit::Stack& arguments, const torch::jit::Stack& routed,
                            const torch::jit::Stack& reference, SampleResult& result) const;
  void compare_gradients(const OpEntry& entry, const torch::jit::Stack& arguments, c10::Device device,
                         SampleResult& result) const;
  std::vector<at::Tensor> gradients(const torch::jit::Stack& arguments, c10::Device device, bool routed) const;

  const SweepUnit& unit_;
  NodeHandle node_;
  c10::OperatorHandle op_;
  const c10::FunctionSchema& schema_;
  std::vector<SampleResult>& results_;
};

bool NodeJudge::judge(const OpEntry& entry, const Sample& sample, c10::Device device, c10::ScalarType dtype) {
  const auto started = Clock::now();
  const bool meant = contains(sample.meant_for, unit_.node_id);
  SampleResult result = start(dtype_name(dtype), sample.description, std::string(to_string(sample.sample_class)));
  result.meant_for = meant;
  torch::jit::Stack arguments = sample.arguments;
  try {
    schema_.checkAndNormalizeInputs(arguments);
  } catch (const std::exception& e) {
    result.mismatches.push_back(
        {"sample", "the op database sample does not fit the schema: " + error_text(e), 0, 0, {}});
    finish(std::move(result), started);
    return meant;
  }

  const CondDecision verdict = check_node(node_, arguments);
  if (verdict.accepted != result.meant_for) {
    result.mismatches.push_back(
        {"cond",
         result.meant_for ? "the cond declines a sample meant for it: " + verdict.reason
                          : "the cond accepts a sample not meant for it (too wide, or the sample's meant_for is wrong)",
         0,
         0,
         {}});
  }

  detail::GuardedArguments reference_arguments(schema_, arguments);
  torch::jit::Stack reference = reference_arguments.stack();
  std::string reference_error;
  {
    BypassRouting bypass;
    try {
      op_.callBoxed(reference);
    } catch (const std::exception& e) {
      reference_error = error_text(e);
    }
  }

  detail::GuardedArguments routed_arguments(schema_, arguments);
  torch::jit::Stack routed = routed_arguments.stack();
  std::string routed_error;
  const uint64_t hits_before = node_.hits();
  {
    SoloRoute solo(node_);
    FillUninitializedMemory fill;
    try {
      op_.callBoxed(routed);
    } catch (const std::exception& e) {
      routed_error = error_text(e);
    }
  }
  const uint64_t fired = node_.hits() - hits_before;
  if (fired != (verdict.accepted ? 1u : 0u)) {
    result.mismatches.push_back({"fired",
                                 verdict.accepted
                                     ? "the cond accepts the call, yet the routed call did not run the impl"
                                     : "the impl ran although the cond declines the call",
                                 0,
                                 0,
                                 {}});
  }

  if (!reference_error.empty() || !routed_error.empty()) {
    if (reference_error.empty()) {
      result.mismatches.push_back({"error", "raised where the original kernel succeeds: " + routed_error, 0, 0, {}});
    } else if (routed_error.empty()) {
      result.mismatches.push_back(
          {"error", "returned a result where the original kernel raises: " + reference_error, 0, 0, {}});
    }
    finish(std::move(result), started);
    return meant;
  }

  if (entry.canonical_outputs) {
    try {
      reference = entry.canonical_outputs(arguments, reference);
      routed = entry.canonical_outputs(arguments, routed);
    } catch (const std::exception& e) {
      result.mismatches.push_back({"values", "the outputs could not be made canonical: " + error_text(e), 0, 0, {}});
      finish(std::move(result), started);
      return meant;
    }
  }

  // A check that cannot even run (an output on the meta device, say) fails as itself.
  auto run_check = [&result](const char* check, const std::function<void()>& body) {
    try {
      body();
    } catch (const std::exception& e) {
      result.mismatches.push_back({check, std::string("could not be compared: ") + error_text(e), 0, 0, {}});
    }
  };
  run_check("values", [&] { compare_outputs(entry, routed, reference, result); });
  run_check("in-place", [&] { check_in_place(arguments, result); });
  // Written arguments must end as the reference's do, whatever the op returns.
  run_check("values", [&] {
    const torch::jit::Stack routed_after = routed_arguments.stack();
    const torch::jit::Stack reference_after = reference_arguments.stack();
    for (size_t i = 0; i < schema_.arguments().size() && i < routed_after.size(); ++i) {
      if (!detail::is_written(schema_.arguments()[i]) || !routed_after[i].isTensor()) continue;
      const at::Tensor& actual = routed_after[i].toTensor();
      if (auto m = detail::compare_values(actual, reference_after[i].toTensor(), entry.tolerance(actual.scalar_type()),
                                          "argument '" + schema_.arguments()[i].name() + "' after the call")) {
        result.mismatches.push_back(*m);
      }
    }
  });
  bool wrote_past_storage = false;
  run_check("guard", [&] {
    if (auto m = routed_arguments.stray_write()) result.mismatches.push_back(*m);
    wrote_past_storage = routed_arguments.wrote_past_spans();
  });
  // The later checks run the impl on unguarded tensors: one that writes past its
  // arguments' storage would corrupt this process's heap there (found under ASan).
  if (verdict.accepted && !wrote_past_storage) {
    if (entry.upcast_reference && at::isFloatingType(dtype) && dtype != at::kDouble) {
      run_check("float64", [&] { compare_with_float64(entry, arguments, routed, reference, result); });
    }
    if (entry.differentiable && at::isFloatingType(dtype)) {
      run_check("gradient", [&] { compare_gradients(entry, arguments, device, result); });
    }
  }
  finish(std::move(result), started);
  return meant;
}

void NodeJudge::compare_outputs(const OpEntry& entry, const torch::jit::Stack& routed,
                                const torch::jit::Stack& reference, SampleResult& result) const {
  if (routed.size() != reference.size()) {
    result.mismatches.push_back(
        {"count",
         "returned " + std::to_string(routed.size()) + " values, the reference " + std::to_string(reference.size()),
         0,
         0,
         {}});
    return;
  }
  for (size_t i = 0; i < routed.size(); ++i) {
    const std::string what = "output " + std::to_string(i);
    if (routed[i].isTensor() != reference[i].isTensor()) {
      result.mismatches.push_back(
          {"count", what + " is " + routed[i].tagKind() + ", the reference's " + reference[i].tagKind(), 0, 0, {}});
      continue;
    }
    if (!routed[i].isTensor()) {
      if (!(routed[i] == reference[i])) {
        result.mismatches.push_back({"values", what + " differs from the reference's", 0, 0, {}});
      }
      continue;
    }
    const at::Tensor& actual = routed[i].toTensor();
    const at::Tensor& expected = reference[i].toTensor();
    // An output left undefined (a gradient its output_mask did not ask for) must be so in both.
    if (actual.defined() != expected.defined()) {
      result.mismatches.push_back(
          {"count",
           what + (actual.defined() ? " is defined" : " is undefined") + " where the reference's is not",
           0,
           0,
           {}});
      continue;
    }
    if (!actual.defined()) continue;
    if (auto m = detail::compare_metadata(actual, expected, what)) {
      result.mismatches.push_back(*m);
      if (m->check != "strides") continue;  // values can still be compared
    }
    if (auto m = detail::compare_values(actual, expected, entry.tolerance(expected.scalar_type()), what)) {
      result.mismatches.push_back(*m);
    }
  }
}

// Autograd's in-place kernels return self whatever the kernel below returns, so the call
// is made again below them (as under InferenceMode), where the impl's return shows.
void NodeJudge::check_in_place(const torch::jit::Stack& arguments, SampleResult& result) const {
  const auto& returns = schema_.returns();
  if (std::none_of(returns.begin(), returns.end(), detail::is_written)) return;
  detail::GuardedArguments guarded(schema_, arguments);
  const torch::jit::Stack inputs = guarded.stack();
  torch::jit::Stack outputs = inputs;
  {
    SoloRoute solo(node_);
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    op_.callBoxed(outputs);
  }
  for (size_t r = 0; r < returns.size() && r < outputs.size(); ++r) {
    if (!detail::is_written(returns[r]) || !outputs[r].isTensor()) continue;
    for (size_t a = 0; a < schema_.arguments().size(); ++a) {
      const c10::Argument& argument = schema_.arguments()[a];
      if (!detail::is_written(argument) || argument.alias_info()->beforeSets() != returns[r].alias_info()->beforeSets())
        continue;
      const at::Tensor& returned = outputs[r].toTensor();
      const at::Tensor& self = inputs[a].toTensor();
      if (!returned.is_same(self)) {
        const bool same_storage = returned.defined() && returned.storage().is_alias_of(self.storage());
        result.mismatches.push_back(
            {"in-place",
             "output " + std::to_string(r) + " must be argument '" + argument.name() + "' itself; it is " +
                 (same_storage ? "another tensor on its storage" : "a new tensor with its own storage"),
             0,
             0,
             {}});
      }
    }
  }
}

// Floating tensors in float64; a call that float64 cannot take is not compared.
void NodeJudge::compare_with_float64(const OpEntry& entry, const torch::jit::Stack& arguments,
                                     const torch::jit::Stack& routed, const torch::jit::Stack& reference,
                                     SampleResult& result) const {
  torch::jit::Stack upcast;
  for (const c10::IValue& value : arguments) {
    const bool floating = value.isTensor() && value.toTensor().defined() && value.toTensor().is_floating_point();
    upcast.push_back(floating ? c10::IValue(value.toTensor().to(at::kDouble)) : value);
  }
  const torch::jit::Stack upcast_arguments = upcast;
  {
    BypassRouting bypass;
    try {
      op_.callBoxed(upcast);
    } catch (const std::exception&) {
      return;  // e.g. a half_to_float flag: the op has no float64 form of this call
    }
  }
  if (entry.canonical_outputs) upcast = entry.canonical_outputs(upcast_arguments, upcast);
  for (size_t i = 0; i < routed.size() && i < upcast.size(); ++i) {
    if (!routed[i].isTensor() || !upcast[i].isTensor()) continue;
    const at::Tensor& actual = routed[i].toTensor();
    if (!actual.defined() || !reference[i].toTensor().defined() || !upcast[i].toTensor().defined()) continue;
    if (!actual.is_floating_point() || detail::compare_metadata(actual, reference[i].toTensor(), "")) continue;
    if (auto m = detail::compare_with_float64(actual, reference[i].toTensor(), upcast[i].toTensor(),
                                              entry.tolerance(actual.scalar_type()), "output " + std::to_string(i))) {
      result.mismatches.push_back(*m);
    }
  }
}

// Leaves hold each floating tensor's storage span, so the call sees the sample's exact
// layout (as_strided is differentiable); written arguments get a non-leaf copy.
std::vector<at::Tensor> NodeJudge::gradients(const torch::jit::Stack& arguments, c10::Device device,
                                             bool routed) const {
  std::vector<at::Tensor> leaves;
  torch::jit::Stack call;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::IValue& value = arguments[i];
    if (!value.isTensor() || !value.toTensor().defined() || !value.toTensor().is_floating_point()) {
      call.push_back(value);
      continue;
    }
    const at::Tensor& tensor = value.toTensor();
    const int64_t span = detail::span_of(tensor);
    at::Tensor leaf = tensor.as_strided({span}, {1}, tensor.storage_offset()).detach().clone().requires_grad_(true);
    leaves.push_back(leaf);
    const at::Tensor source =
        i < schema_.arguments().size() && detail::is_written(schema_.arguments()[i]) ? leaf.clone() : leaf;
    call.push_back(source.as_strided(tensor.sizes(), tensor.strides(), 0));
  }
  auto run = [&] {
    op_.callBoxed(call);
    std::vector<at::Tensor> outputs;
    std::vector<at::Tensor> grad_outputs;
    for (const c10::IValue& value : call) {
      if (!value.isTensor() || !value.toTensor().requires_grad()) continue;
      const at::Tensor& output = value.toTensor();
      outputs.push_back(output);
      samples::Fill fill;
      fill.seed = 1234 + outputs.size();
      fill.low = -1;
      fill.high = 1;
      grad_outputs.push_back(samples::make_tensor(output.sizes(), output.scalar_type(), device, fill));
    }
    if (outputs.empty()) return std::vector<at::Tensor>{};
    return torch::autograd::grad(outputs, leaves, grad_outputs, /*retain_graph=*/false, /*create_graph=*/false,
                                 /*allow_unused=*/true);
  };
  if (routed) {
    SoloRoute solo(node_);
    return run();
  }
  BypassRouting bypass;
  return run();
}

void NodeJudge::compare_gradients(const OpEntry& entry, const torch::jit::Stack& arguments, c10::Device device,
                                  SampleResult& result) const {
  std::vector<at::Tensor> routed;
  std::vector<at::Tensor> reference;
  try {
    reference = gradients(arguments, device, /*routed=*/false);
  } catch (const std::exception&) {
    return;  // no derivative for this call (e.g. an integer flag makes it non-differentiable)
  }
  try {
    routed = gradients(arguments, device, /*routed=*/true);
  } catch (const std::exception& e) {
    result.mismatches.push_back(
        {"gradient", "backward raised where the reference's succeeds: " + error_text(e), 0, 0, {}});
    return;
  }
  for (size_t i = 0; i < routed.size() && i < reference.size(); ++i) {
    if (routed[i].defined() != reference[i].defined()) {
      result.mismatches.push_back({"gradient",
                                   "the gradient of input " + std::to_string(i) +
                                       (routed[i].defined() ? " exists" : " is missing") + " unlike the reference's",
                                   0,
                                   0,
                                   {}});
      continue;
    }
    if (!routed[i].defined()) continue;
    // Backward formulas amplify the outputs' last-bit rounding (a softmax gradient takes
    // y * (g - sum(g * y))): gradients get twice the outputs' tolerance.
    Tolerance tolerance = entry.tolerance(reference[i].scalar_type());
    tolerance.rtol *= 2;
    tolerance.atol *= 2;
    if (auto m = detail::compare_values(routed[i], reference[i], tolerance,
                                        "gradient of floating input " + std::to_string(i), "gradient")) {
      result.mismatches.push_back(*m);
    }
  }
}

void NodeJudge::judge_error(const ErrorSample& sample) {
  const auto started = Clock::now();
  SampleResult result = start("", sample.description, "error");
  torch::jit::Stack routed = sample.arguments;
  std::string routed_error;
  {
    SoloRoute solo(node_);
    try {
      op_.callBoxed(routed);
    } catch (const std::exception& e) {
      routed_error = error_text(e);
    }
  }
  if (routed_error.empty()) {
    result.mismatches.push_back(
        {"error", "accepted an invalid call; expected an error containing '" + sample.error_contains + "'", 0, 0, {}});
  } else if (routed_error.find(sample.error_contains) == std::string::npos) {
    result.mismatches.push_back({"error",
                                 "raised \"" + routed_error.substr(0, routed_error.find('\n')) +
                                     "\"; expected an error containing '" + sample.error_contains + "'",
                                 0,
                                 0,
                                 {}});
  }
  torch::jit::Stack reference = sample.arguments;
  {
    BypassRouting bypass;
    try {
      op_.callBoxed(reference);
      result.mismatches.push_back(
          {"error", "the original kernel accepts this error sample: fix the op database entry", 0, 0, {}});
    } catch (const std::exception&) {
    }
  }
  finish(std::move(result), started);
}

size_t steps_of(const SweepUnit& unit, const SweepOptions& options) {
  size_t steps = 1;  // error samples and coverage
  for (const OpEntry& entry : op_entries_for(unit.op_symbol, unit.dsl)) {
    if (has_device(entry, unit.device)) steps += dtypes_to_run(entry, options).size();
  }
  return steps;
}

}  // namespace

std::vector<SweepUnit> plan_sweep(const SweepOptions& options) {
  if (!options.dsl.empty()) require_dsl(options.dsl);
  if (options.shard_count == 0 || options.shard_index >= options.shard_count) {
    throw Error("shard " + std::to_string(options.shard_index + 1) + "/" + std::to_string(options.shard_count) +
                " does not exist: K/N needs 1 <= K <= N");
  }
  for (c10::DeviceType device : options.devices) {
    if (device == c10::DeviceType::CUDA && !at::hasCUDA()) {
      throw Error(
          "cannot sweep on cuda: this process sees no CUDA device (check nvidia-smi and "
          "CUDA_VISIBLE_DEVICES, or sweep --device cpu)");
    }
  }
  const std::string op = options.op_symbol.empty() ? "" : parse_op_symbol(options.op_symbol).str();
  std::vector<SweepUnit> units;
  std::vector<std::string> known_ops;
  for (const GraphInfo& graph : graphs()) {
    known_ops.push_back(graph.op_symbol);
    if (!op.empty() && graph.op_symbol != op) continue;
    const std::optional<c10::DeviceType> device = device_type_of(graph.key);
    if (!device) continue;
    if (!options.devices.empty() &&
        std::find(options.devices.begin(), options.devices.end(), *device) == options.devices.end()) {
      continue;
    }
    for (const NodeInfo& node : graph.nodes) {
      if (!options.dsl.empty() && node.dsl != options.dsl) continue;
      units.push_back({node.id, node.dsl, graph.op_symbol, *device});
    }
  }
  if (!op.empty() && std::find(known_ops.begin(), known_ops.end(), op) == known_ops.end()) {
    throw Error("no override is registered for op '" + op + "'" + did_you_mean(op, known_ops) +
                " (`native-ops list` shows them)");
  }
  std::sort(units.begin(), units.end(), [](const SweepUnit& a, const SweepUnit& b) { return a.node_id < b.node_id; });
  return units;
}

std::vector<SweepUnit> shard(const std::vector<SweepUnit>& units, const SweepOptions& options) {
  std::vector<SweepUnit> mine;
  for (size_t i = options.shard_index; i < units.size(); i += options.shard_count) mine.push_back(units[i]);
  return mine;
}

std::vector<SampleResult> run_sweep(const std::vector<SweepUnit>& units, const SweepOptions& options,
                                    const SweepProgress& progress) {
  const detail::StrictFailuresScope strict;  // a fallback would judge aten, not the override
  size_t total = 0;
  for (const SweepUnit& unit : units) total += steps_of(unit, options);
  size_t done = 0;
  auto step = [&](const std::string& what) {
    ++done;
    if (progress) progress(done, total, what);
  };

  std::vector<SampleResult> results;
  for (const SweepUnit& unit : units) {
    const c10::Device device = unit.target();
    SampleResult coverage = result_for(unit, "", "samples meant for this node", "coverage");

    std::optional<NodeHandle> node;
    try {
      node = find_node_handle(unit.node_id);  // an unavailable node says why first
      if (unit.device == c10::DeviceType::CUDA && !at::hasCUDA()) {
        throw Error("no CUDA device is visible to this process");
      }
    } catch (const Error& e) {
      coverage.outcome = Outcome::skipped;
      coverage.skip_reason = e.what();
      results.push_back(coverage);
      for (size_t s = steps_of(unit, options); s > 0; --s) step(unit.node_id + " skipped");
      continue;
    }

    NodeJudge judge(unit, *node, results);
    const std::vector<OpEntry> entries = op_entries_for(unit.op_symbol, unit.dsl);
    size_t meant = 0;
    bool any_dtype = false;
    for (const OpEntry& entry : entries) {
      if (!has_device(entry, unit.device)) continue;
      for (c10::ScalarType dtype : dtypes_to_run(entry, options)) {
        any_dtype = true;
        for (const Sample& sample : entry.samples(device, dtype)) {
          if (judge.judge(entry, sample, device, dtype)) ++meant;
        }
        step(unit.node_id + " " + device.str() + " " + dtype_name(dtype));
      }
    }
    for (const OpEntry& entry : entries) {
      if (!has_device(entry, unit.device) || !entry.error_samples) continue;
      for (const ErrorSample& sample : entry.error_samples(device)) judge.judge_error(sample);
    }
    step(unit.node_id + " " + device.str() + " error samples");

    if (meant > 0) {
      coverage.outcome = Outcome::passed;
    } else if (entries.empty()) {
      coverage.outcome = Outcome::failed;
      coverage.mismatches.push_back({"coverage",
                                     "not exercised: the op database has no entry for " + unit.op_symbol + " tagged '" +
                                         unit.dsl + "' (register one with register_op_entry)",
                                     0,
                                     0,
                                     {}});
    } else if (!options.dtypes.empty() || !any_dtype) {
      coverage.outcome = Outcome::skipped;
      coverage.skip_reason = "no sample meant for it among the dtypes and devices asked for";
    } else {
      coverage.outcome = Outcome::failed;
      coverage.mismatches.push_back({"coverage",
                                     "not exercised: no sample of the op database is meant for " + unit.node_id +
                                         " on " + device.str() + " (list its id in a sample's meant_for)",
                                     0,
                                     0,
                                     {}});
    }
    results.push_back(std::move(coverage));
  }
  return results;
}

}  // namespace native_ops
