#pragma once
// Fault containment: what the router does when an override's kernel cannot run (its impl
// throws native_ops::KernelUnavailable: a missing artifact, no driver, a failed load or
// launch).
//
//   fallback (the default): the original kernel runs for that call, the node is switched
//            off (listed as unavailable, with the error), and one warning is logged.
//            One DSL that cannot run never breaks a model: the case of upstream's
//            issue #196977, where every model crashed because one DSL could not build
//            its driver.
//   strict:  the error reaches the caller, naming the node.
//
// Set per node id, per DSL, or for every node ("*"); a node's own setting beats its
// DSL's, which beats "*". From policies ("on_error": {"triton": "strict"}), from
// NATIVE_OPS_ON_ERROR at init() ("strict", or "triton=strict,bmm_cuda_0=fallback"), or
// with set_on_error(). Conformance sweeps and benchmarks always run strict: a fallback
// would judge or time aten instead of the override.
// Other exceptions an impl throws (bad input, wrong results caught by a check) always
// reach the caller, and so does everything a node of a DSL whose kernels are linked in
// (cpp, make_compiled_in_dsl: Dsl::kernels_load_at_run_time) throws: nothing of it can
// fail to load, so it never falls back, and a boxed hit keeps no copy of the arguments.

#include <string>
#include <string_view>
#include "native_ops/export.h"

namespace native_ops {

enum class OnError { fallback, strict };

/// "fallback" or "strict"; throws native_ops::Error naming both for anything else.
NATIVE_OPS_API OnError parse_on_error(std::string_view text);
NATIVE_OPS_API std::string_view to_string(OnError action);

/// Sets the action for `target`: a registered node id, a DSL name, or "*". Throws
/// native_ops::Error, changing nothing, for a target that names neither (with close
/// names). Nodes registered later get it too.
NATIVE_OPS_API void set_on_error(const std::string& target, OnError action);

/// Forgets every setting: every node goes back to the default, fallback.
NATIVE_OPS_API void clear_on_error();

/// The action in force for node `node_id`; throws native_ops::Error for an unknown id.
NATIVE_OPS_API OnError on_error_of(std::string_view node_id);

}  // namespace native_ops
