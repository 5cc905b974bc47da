#pragma once
// The `cpp` DSL: host C++ kernels compiled into the library. Always available.

#include <memory>

#include "native_ops/dsl.h"

namespace native_ops::builtin_dsls {

std::unique_ptr<Dsl> make_cpp_dsl();

}  // namespace native_ops::builtin_dsls
