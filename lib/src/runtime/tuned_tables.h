#pragma once
// The selection tables that ship with native-ops (policies/tuned/*.json), compiled in by
// lib/CMakeLists.txt. init() applies them unless NATIVE_OPS_TUNED_TABLES=0, a policy or an
// ordering function is set; each table holds for the device it was tuned on only.

#include <string>
#include <vector>

#include "native_ops/policy.h"

namespace native_ops::detail {

struct TunedPolicy {
  const char* name;  // "policies/tuned/h200-sm90.json"
  const char* json;
};

const std::vector<TunedPolicy>& tuned_policies();

/// The shipped tables in force on a machine whose NVIDIA GPUs are `gpu_models`
/// (nvidia_gpu_models()), a policy a file read. Each file holds the tables tuned on one GPU
/// model: with GPUs, only the files that name one of their models are read (no other table
/// could apply here, and parsing is most of init()'s time); without, every file is, for
/// list and explain. Of a graph's tables in several files, the one tuned on the first of
/// `gpu_models` that has one is kept, else the first file's (which then applies on no device:
/// calls are routed in order). Throws native_ops::Error for a file that does not parse.
std::vector<Policy> tables_for_gpus(const std::vector<TunedPolicy>& files, const std::vector<std::string>& gpu_models);

}  // namespace native_ops::detail
