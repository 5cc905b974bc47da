#include "native_ops/dsls/cpp.h"

namespace native_ops::builtin_dsls {

namespace {

// Host C++ compiled into the library: nothing to load, so always available.
class CppDsl final : public Dsl {
 public:
  std::string_view name() const override { return "cpp"; }
  bool runtime_available() const override { return true; }
  std::string runtime_version() const override {
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "g++ " __VERSION__;
#else
    return "unknown compiler";
#endif
  }
  std::string unavailable_reason() const override { return ""; }
};

}  // namespace

std::unique_ptr<Dsl> make_cpp_dsl() { return std::make_unique<CppDsl>(); }

}  // namespace native_ops::builtin_dsls
