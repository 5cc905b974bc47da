#pragma once
// The triton DSL's kernels, compiled ahead of time by lib/src/dsls/triton/aot.py into a
// generated source (build/triton/triton_artifacts.cpp): a cubin and its launch metadata
// per compiled variant. A build without Triton has an empty table.

#include <cstddef>
#include <cstdint>

namespace native_ops::triton {

/// One compiled kernel and what launching it needs.
struct Artifact {
  const char* key;   // "softmax_rows:bf16:log:4096": how an impl names it
  const char* name;  // the kernel's symbol in the cubin
  const unsigned char* cubin;
  size_t cubin_size;
  int num_warps;
  int shared;                   // dynamic shared memory, bytes
  int64_t global_scratch_size;  // per program; Triton appends a pointer to it
  int global_scratch_align;
  int64_t profile_scratch_size;  // Triton appends a pointer to it too (null when 0)
  int arguments;                 // the kernel's own runtime arguments, before the two appended ones
  // The largest cluster it runs in (Grid::cluster). Above 1, its programs exchange through
  // their cluster's shared memory (lib/src/dsls/triton/triton_common.py), whose bytes `shared` counts.
  unsigned max_cluster;
};

struct ArtifactTable {
  const Artifact* data;
  size_t size;
};

/// Every compiled kernel of this build.
ArtifactTable artifacts();

/// The Triton version that compiled them ("" when none were).
const char* compiler_version();

}  // namespace native_ops::triton
