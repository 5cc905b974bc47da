// The `cpp` DSL: its descriptor (native_ops::Dsl), listed in the DSL table (lib/src/dsls/dsls.cmake).
#include <memory>

#include "native_ops/dsl.h"

namespace native_ops::builtin_dsls {

// Host C++ compiled into this library: nothing to load, so always available.
std::unique_ptr<Dsl> make_cpp_dsl() {
#if defined(__clang__)
  return make_compiled_in_dsl("cpp", "clang " __clang_version__);
#else
  return make_compiled_in_dsl("cpp", "g++ " __VERSION__);
#endif
}

}  // namespace native_ops::builtin_dsls
