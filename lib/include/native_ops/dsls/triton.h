#pragma once
// The `triton` DSL: Triton kernels compiled ahead of time to cubins at build time and
// launched through the CUDA driver. Available when this build holds compiled Triton
// kernels and an NVIDIA driver is installed; the check never loads a runtime.

#include <memory>

#include "native_ops/dsl.h"

namespace native_ops::builtin_dsls {

std::unique_ptr<Dsl> make_triton_dsl();

}  // namespace native_ops::builtin_dsls
