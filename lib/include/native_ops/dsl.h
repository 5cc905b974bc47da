#pragma once
// DSLs: the languages override kernels are written in (host C++, CUDA C++, Triton).
//
// Each DSL is one class implementing Dsl, in one header under native_ops/dsls/ and one
// source under lib/src/dsls/, plus one line in the table of lib/src/dsl_registry.cpp.
// Availability and version checks must never load the DSL's runtime and never
// initialise CUDA: they read files and library metadata only.

#include <memory>
#include <string>
#include <string_view>
#include <vector>
#include "native_ops/export.h"

#include "native_ops/registry.h"

namespace native_ops {

class NATIVE_OPS_API Dsl {
 public:
  virtual ~Dsl() = default;
  /// The name overrides are registered under ("cpp", "cuda", "triton").
  virtual std::string_view name() const = 0;
  /// True when kernels of this DSL can run in this process.
  virtual bool runtime_available() const = 0;
  /// The runtime's version ("" when unavailable).
  virtual std::string runtime_version() const = 0;
  /// Why the runtime is unavailable and how to fix that ("" when available).
  virtual std::string unavailable_reason() const = 0;
  /// True when a kernel of this DSL can turn out unable to run at a call (it is loaded,
  /// compiled or launched through a runtime): its nodes then fall back to aten on
  /// KernelUnavailable (faults.h), and a boxed hit keeps a copy of the arguments for that.
  /// False for kernels linked into the library that registers them, which have nothing
  /// to load: their nodes never fall back and a boxed hit copies nothing.
  virtual bool kernels_load_at_run_time() const { return true; }
};

/// A DSL whose kernels are compiled into the library that registers them, so there is no
/// runtime to load: always available, and its kernels never load at run time. What a
/// plugin registers for a DSL name of its own (a DSL of a vendor runtime that its
/// kernels load lazily implements Dsl itself, so that its nodes can fall back).
NATIVE_OPS_API std::unique_ptr<Dsl> make_compiled_in_dsl(std::string name, std::string version);

/// Adds a DSL (e.g. from a plugin). Throws native_ops::Error if the name is taken.
NATIVE_OPS_API void register_dsl(std::unique_ptr<Dsl> dsl);
/// The DSL named `name`, or nullptr.
NATIVE_OPS_API const Dsl* find_dsl(std::string_view name);
/// Every DSL, built-ins first.
NATIVE_OPS_API std::vector<const Dsl*> dsls();
/// Every DSL's name, in dsls()' order.
NATIVE_OPS_API std::vector<std::string> dsl_names();

/// Switches off every override of the DSL (a Filter on dsl); returns how many changed.
NATIVE_OPS_API size_t disable_dsl(std::string_view name, Apply apply = Apply::nodes_only);
/// Switches every override of the DSL on again; returns how many changed.
NATIVE_OPS_API size_t enable_dsl(std::string_view name, Apply apply = Apply::nodes_only);

}  // namespace native_ops
