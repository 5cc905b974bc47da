#pragma once
// The router behind every routed (op, key): the node list it walks, the original kernel
// it falls through to, and the typed hot path. Internal: use registry.h and typed.h.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include "native_ops/export.h"

#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/boxing/impl/make_boxed_from_unboxed_functor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/macros/Macros.h>

#include "native_ops/boxed.h"
#include "native_ops/detail/features.h"
#include "native_ops/detail/thread_routing.h"
#include "native_ops/error.h"
#include "native_ops/log.h"

namespace native_ops::detail {

/// The cond and impl of one node, in the calling convention of its graph.
struct Callables {
  virtual ~Callables() = default;
  /// Runs the cond on a call's arguments, boxed (`arguments`: exactly the schema's, in
  /// order). For tools (explain): the router calls conds unboxed.
  virtual Verdict check(const c10::FunctionSchema& schema, torch::jit::Stack arguments) const = 0;
  /// Runs the impl alone, boxed: pops the arguments off `stack`, pushes the results. For
  /// tools (conformance sweeps, benchmarks); the caller sets up the ActiveRouteScope.
  virtual void run_impl(const c10::OperatorHandle& op, torch::jit::Stack& stack) const = 0;
};

template <class Sig>
struct TypedCallables;

template <class Ret, class... Args>
struct TypedCallables<Ret(Args...)> final : Callables {
  std::function<Verdict(Args...)> cond;  // empty for an unconditional node
  std::function<Ret(Args...)> impl;

  Verdict check(const c10::FunctionSchema&, torch::jit::Stack arguments) const override {
    return check_unboxed(arguments, std::index_sequence_for<Args...>{});
  }

  void run_impl(const c10::OperatorHandle&, torch::jit::Stack& stack) const override {
    run_unboxed(stack, std::index_sequence_for<Args...>{});
  }

 private:
  template <size_t... I>
  void run_unboxed(torch::jit::Stack& stack, std::index_sequence<I...>) const {
    if constexpr (std::is_void_v<Ret>) {
      impl(c10::impl::ivalue_to_arg<typename c10::impl::decay_if_not_tensor<Args>::type, false>::call(
          torch::jit::peek(stack, I, sizeof...(Args)))...);
      torch::jit::drop(stack, sizeof...(Args));
    } else {
      Ret result = impl(c10::impl::ivalue_to_arg<typename c10::impl::decay_if_not_tensor<Args>::type, false>::call(
          torch::jit::peek(stack, I, sizeof...(Args)))...);
      torch::jit::drop(stack, sizeof...(Args));
      c10::impl::push_outputs<Ret, false>::call(std::forward<Ret>(result), &stack);
    }
  }

  template <size_t... I>
  Verdict check_unboxed(torch::jit::Stack& arguments, std::index_sequence<I...>) const {
    if (!cond) {
      return true;
    }
    // Unboxed the way the dispatcher unboxes a kernel's arguments.
    return cond(c10::impl::ivalue_to_arg<typename c10::impl::decay_if_not_tensor<Args>::type, false>::call(
        torch::jit::peek(arguments, I, sizeof...(Args)))...);
  }
};

/// The cond and impl of a node of a boxed graph.
struct BoxedCallables final : Callables {
  BoxedCond cond;  // empty for an unconditional node
  BoxedImpl impl;

  Verdict check(const c10::FunctionSchema& schema, torch::jit::Stack arguments) const override {
    return cond ? cond(BoxedArgs(schema, arguments)) : Verdict(true);
  }
  void run_impl(const c10::OperatorHandle& op, torch::jit::Stack& stack) const override { impl(op, stack); }
};

/// One registered override. Identity and callables never change after registration;
/// the state fields are written under the registry's lock only.
struct Node {
  std::string id;
  std::string dsl;
  uint32_t slot = 0;  // counter slot in its router
  bool unconditional = false;
  bool kernels_load_at_run_time = true;  // its DSL's (Dsl::kernels_load_at_run_time)
  std::unique_ptr<Callables> callables;

  mutable std::atomic<uint64_t> cond_errors{0};
  mutable std::atomic<bool> cond_error_logged{false};
  /// Whether a KernelUnavailable from the impl reaches the caller (faults.h), resolved
  /// from the settings whenever they change; read without a lock on the failure path.
  std::atomic<bool> strict_on_error{false};

  std::string origin;              // "built-in", a plugin's path, or "program"
  std::string disabled_by;         // non-empty: switched off by this filter
  std::string dropped_by;          // why the order in force leaves it out, when it does
  std::string unavailable_reason;  // non-empty: can never run in this process
};

/// A selection table compiled against one route list (runtime/selection.h).
struct CompiledSelection;

/// An immutable, published list of the nodes a router walks, in order, and the selection
/// table in force, if any.
struct RouteList {
  std::vector<const Node*> nodes;
  std::shared_ptr<const CompiledSelection> selection;
  const FeaturesFunction* features = nullptr;  // set with selection: the graph's op's
};

/// What a selection table picks for a call: the index of a node in its route list, or
/// one of these.
inline constexpr int kPickAten = -1;
inline constexpr int kPickInOrder = -2;  // walk the list: no table cell applies

/// The pick of `selection` for a call with these features. Allocates nothing, takes no lock.
NATIVE_OPS_API int pick(const CompiledSelection& selection, const ShapeFeatures& features) noexcept;

/// The pick for a typed call; a features function that throws routes the call in order.
template <class Ret, class... Args>
C10_NOINLINE int typed_pick(const RouteList& list, const Args&... args) noexcept {
  try {
    return pick(*list.selection, static_cast<const TypedFeatures<Ret(Args...)>&>(*list.features).fn(args...));
  } catch (...) {
    return kPickInOrder;
  }
}

/// The nodes a call may run, in order: all of the list, the one a selection table picks,
/// or none.
struct Candidates {
  const Node* const* first;
  const Node* const* last;
};

inline Candidates candidates(const RouteList& list, int pick) {
  const Node* const* first = list.nodes.data();
  if (pick == kPickInOrder) return {first, first + list.nodes.size()};
  if (pick == kPickAten) return {first, first};
  return {first + pick, first + pick + 1};
}

/// The state of one router. Created once per (op, key) graph and never freed, so a call
/// that is still running while a graph changes never sees freed memory.
struct RouterState {
  c10::OperatorHandle op;
  c10::DispatchKey key;
  uint32_t index;
  std::string name;              // "aten::bmm @ CPU", for logs and errors
  c10::KernelFunction original;  // what the router replaced, captured at install
  std::atomic<const RouteList*> routes{nullptr};
};

/// Whether a KernelUnavailable from `node`'s impl would be contained on this thread now:
/// neither the node nor a StrictFailuresScope is strict.
NATIVE_OPS_API bool may_contain_kernel_failure(const ThreadRouting& t, const Node& node);
/// A KernelUnavailable from `node`'s impl (faults.h): true when it is contained (the
/// node is switched off, warned about once, and the call counted as a fall-through: the
/// caller then runs the original kernel); false when it must reach the caller.
NATIVE_OPS_API bool contain_kernel_failure(ThreadRouting& t, const RouterState& router, const Node& node,
                                           const KernelUnavailable& failure);
/// Records a throwing cond (counted, warned once per node); returns false ("no match").
NATIVE_OPS_API bool cond_failed(const Node& node) noexcept;
/// Rethrows the exception in flight with the node id and dsl attached.
[[noreturn]] NATIVE_OPS_API void rethrow_impl_error(const Node& node);
NATIVE_OPS_API void log_decision(const RouterState& router, const Node* node);

/// Runs the cond of `node`; a throw counts as "no match".
template <class Cond, class... Args>
inline bool accepts(const Cond& cond, const Node& node, Args&&... args) {
  if (!cond) {
    return true;  // unconditional
  }
  try {
    return cond(std::forward<Args>(args)...).accepted();
  } catch (...) {
    return cond_failed(node);
  }
}

/// The hit path, kept out of line so that the fall-through path stays small.
template <class Ret, class... Args>
C10_NOINLINE Ret run_typed_impl(ThreadRouting& t, const RouterState& router, const Node& node, c10::DispatchKeySet keys,
                                Args... args) {
  count(t, router.index, node.slot);
  if (log::debug_enabled()) {
    log_decision(router, &node);
  }
  const auto& fns = static_cast<const TypedCallables<Ret(Args...)>&>(*node.callables);
  try {
    ActiveRouteScope scope(t, router, router.index, keys);
    // Arguments are passed as lvalues: the original may still need them (below).
    return fns.impl(args...);
  } catch (const KernelUnavailable& failure) {
    if (!contain_kernel_failure(t, router, node, failure)) rethrow_impl_error(node);
  } catch (...) {
    rethrow_impl_error(node);
  }
  return router.original.template call<Ret, Args...>(router.op, keys, std::forward<Args>(args)...);
}

/// The typed hot path: first active node whose cond accepts runs (of those a selection
/// table picks, when one is in force); else the original.
/// Inlined into the router's dispatcher kernel: one call frame fewer per routed call.
template <class Ret, class... Args>
C10_ALWAYS_INLINE Ret typed_route(const RouterState& router, c10::DispatchKeySet keys, Args... args) {
  ThreadRouting& t = tls_routing;
  const uint32_t index = router.index;
  if (C10_LIKELY(!t.is_active(index))) {
    const RouteList* list = router.routes.load(std::memory_order_acquire);
    const int picked =
        C10_UNLIKELY(list->selection != nullptr) ? typed_pick<Ret, Args...>(*list, args...) : kPickInOrder;
    const Candidates nodes = candidates(*list, picked);
    for (const Node* const* at = nodes.first; at != nodes.last; ++at) {
      const Node* node = *at;
      const auto& fns = static_cast<const TypedCallables<Ret(Args...)>&>(*node->callables);
      if (accepts(fns.cond, *node, args...)) {
        return run_typed_impl<Ret, Args...>(t, router, *node, keys, std::forward<Args>(args)...);
      }
    }
    count(t, index, kFallthroughSlot);
    if (log::debug_enabled()) {
      log_decision(router, nullptr);
    }
  }
  return router.original.template call<Ret, Args...>(router.op, keys, std::forward<Args>(args)...);
}

[[noreturn]] NATIVE_OPS_API void throw_no_active_route(const c10::OperatorHandle& op);

/// The innermost override impl running on this thread for `op`; throws native_ops::Error
/// when none is (call_original used outside an impl).
inline const ActiveRoute& active_route_for(const c10::OperatorHandle& op) {
  for (const ActiveRoute* route = tls_routing.innermost; route != nullptr; route = route->outer) {
    if (route->router->op == op) {
      return *route;
    }
  }
  throw_no_active_route(op);
}

}  // namespace native_ops::detail
