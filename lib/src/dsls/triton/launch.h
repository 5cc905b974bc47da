#pragma once
// Launching the triton DSL's ahead-of-time kernels (artifacts.h) through the CUDA
// driver API, which is opened by dlopen on the first launch: nothing links libcuda and
// init() never touches it. A kernel's module is loaded on its first launch on each device.

#include <initializer_list>
#include <string>
#include <string_view>

#include <ATen/core/Tensor.h>

#include "dsls/triton/artifacts.h"

namespace native_ops::triton {

/// A grid of programs. `cluster` > 1 launches them in clusters of that many consecutive
/// programs along x (which it must divide), as an artifact whose programs exchange through
/// their cluster needs: up to its max_cluster. Clusters of more than 8 (the portable size)
/// are allowed for such an artifact when its module is loaded; Hopper takes up to 16.
struct Grid {
  unsigned x = 1, y = 1, z = 1;
  unsigned cluster = 1;
};

/// The compiled kernel named `key`. Throws native_ops::KernelUnavailable when this build
/// lacks it.
/// A linear search: impls resolve their kernels once (see dtype_index()).
const Artifact& find(std::string_view key);

/// The dtypes the kernels are compiled for, as their keys spell them, in this order.
inline constexpr const char* kDtypeKeys[] = {"f32", "f16", "bf16"};
/// A float32, float16 or bfloat16 tensor's index in kDtypeKeys.
int dtype_index(const at::Tensor& tensor);

/// Programs per multiprocessor of a persistent kernel of `num_warps` warps: 32 warps an SM
/// (one program of 32 warps or two of 16). The row kernels ran best so: three of 16 ran
/// slower (docs/design/triton-rows.md), likely because more wide rows stay open between
/// their two reads than L2 holds.
int programs_per_multiprocessor(int num_warps);

/// The grid of a persistent kernel that takes `pieces` of work in turn:
/// programs_per_multiprocessor() programs per multiprocessor of `on`'s device, or one per
/// piece when there are fewer. Loads `artifact` on that device first; throws as launch()
/// does.
Grid persistent_grid(const Artifact& artifact, int64_t pieces, const at::Tensor& on);

/// Launches `artifact` over `grid` on `on`'s device and current stream. `arguments` points
/// at each runtime argument's value, in the kernel's order (the two scratch pointers
/// Triton appends are added here). Throws native_ops::KernelUnavailable, naming the
/// kernel, when the driver, the module or the launch fails; native_ops::Error when the
/// argument count is not the kernel's, or the grid's clusters are not what the kernel
/// takes (bugs in the impl, not a kernel that cannot run), before anything is launched.
void launch(const Artifact& artifact, Grid grid, std::initializer_list<const void*> arguments, const at::Tensor& on);

}  // namespace native_ops::triton
