#include "runtime/router.h"

#include <sstream>

#include <c10/util/Exception.h>

#include "native_ops/error.h"
#include "native_ops/log.h"

namespace native_ops {

namespace detail {

namespace {

// OperatorHandle keeps its OperatorEntry behind a private pointer, and libtorch offers no
// typed access to a computed kernel. An explicit instantiation may name a private member
// (standard C++, no layout assumption); the friend function hands the member pointer out.
struct OperatorDefTag {
  friend auto operator_def_member(OperatorDefTag);
};
template <auto Member>
struct ExposeOperatorDef {
  friend auto operator_def_member(OperatorDefTag) { return Member; }
};
template struct ExposeOperatorDef<&c10::OperatorHandle::operatorDef_>;

class WarningsToDebugLog final : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override { log::debug("dispatcher: " + warning.msg()); }
};

C10_NOINLINE void run_boxed_impl(ThreadRouting& t, const RouterState& router, const Node& node,
                                 const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack& stack) {
  count(t, router.index, node.slot);
  if (log::debug_enabled()) {
    log_decision(router, &node);
  }
  // The arguments, kept for the original kernel should the impl's kernel fail to run
  // (the impl pops them); on the stack of this frame for up to 16 of them. A node of a
  // DSL whose kernels are linked in, a strict node, or a strict scope never falls back:
  // nothing is kept. The decision is read once, so
  // that a policy switching the node to fallback meanwhile finds no arguments missing.
  const bool may_fall_back = may_contain_kernel_failure(t, node);
  const size_t count = op.schema().arguments().size();
  const size_t base = stack.size() - count;
  c10::SmallVector<c10::IValue, 16> arguments;
  if (may_fall_back) arguments.assign(stack.begin() + static_cast<std::ptrdiff_t>(base), stack.end());
  try {
    ActiveRouteScope scope(t, router, router.index, keys);
    static_cast<const BoxedCallables&>(*node.callables).impl(op, stack);
    return;
  } catch (const KernelUnavailable& failure) {
    if (!may_fall_back || !contain_kernel_failure(t, router, node, failure)) rethrow_impl_error(node);
  } catch (...) {
    rethrow_impl_error(node);
  }
  stack.resize(base);
  stack.insert(stack.end(), arguments.begin(), arguments.end());
  router.original.callBoxed(op, keys, &stack);
}

void boxed_route(const RouterState& router, const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                 torch::jit::Stack& stack) {
  ThreadRouting& t = tls_routing;
  const uint32_t index = router.index;
  if (C10_LIKELY(!t.is_active(index))) {
    const RouteList* list = router.routes.load(std::memory_order_acquire);
    const BoxedArgs args(op.schema(), stack);
    int picked = kPickInOrder;
    if (C10_UNLIKELY(list->selection != nullptr)) {
      try {
        picked = pick(*list->selection, static_cast<const BoxedFeatures&>(*list->features).fn(args));
      } catch (...) {
      }
    }
    const Candidates nodes = candidates(*list, picked);
    for (const Node* const* at = nodes.first; at != nodes.last; ++at) {
      const Node* node = *at;
      if (accepts(static_cast<const BoxedCallables&>(*node->callables).cond, *node, args)) {
        run_boxed_impl(t, router, *node, op, keys, stack);
        return;
      }
    }
    count(t, index, kFallthroughSlot);
    if (log::debug_enabled()) {
      log_decision(router, nullptr);
    }
  }
  router.original.callBoxed(op, keys, &stack);
}

class BoxedRouterKernel final : public c10::OperatorKernel {
 public:
  explicit BoxedRouterKernel(const RouterState* router) : router_(router) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
    boxed_route(*router_, op, keys, *stack);
  }

 private:
  const RouterState* router_;
};

}  // namespace

c10::KernelFunction capture_original(const c10::OperatorHandle& op, c10::DispatchKey key) {
  const auto member = operator_def_member(OperatorDefTag{});
  return (op.*member)->op.lookup(c10::DispatchKeySet(key));
}

std::vector<std::string> foreign_kernels(const c10::OperatorHandle& op, c10::DispatchKey key) {
  // dumpState() lists the kernels of each key newest first, one a line:
  // "CPU: registered at FILE:LINE :: ..." and "CPU (inactive): registered at ...".
  const std::string active = std::string(c10::toString(key)) + ": ";
  const std::string inactive = std::string(c10::toString(key)) + " (inactive): ";
  std::vector<std::string> kernels;
  std::istringstream state(op.dumpState());
  for (std::string line; std::getline(state, line);) {
    const bool at_key = line.rfind(active, 0) == 0 || line.rfind(inactive, 0) == 0;
    if (!at_key || line.find(__FILE__) != std::string::npos) continue;  // other keys, or a router of ours
    const size_t from = line.find("registered at ");
    kernels.push_back(line.substr(from, line.find(" :: ", from) - from));
  }
  if (!kernels.empty()) kernels.pop_back();  // the oldest: libtorch's own
  return kernels;
}

torch::CppFunction boxed_router_kernel(const RouterState* router) {
  return torch::CppFunction::makeFromBoxedFunctor(std::make_unique<BoxedRouterKernel>(router));
}

std::unique_ptr<torch::Library> install_router(const std::string& lib_symbol, c10::DispatchKey key,
                                               const std::string& qualified_name, torch::CppFunction kernel) {
  WarningsToDebugLog to_debug_log;
  c10::WarningUtils::WarningHandlerGuard guard(&to_debug_log);
  auto library = std::make_unique<torch::Library>(torch::Library::IMPL, lib_symbol, key, __FILE__, __LINE__);
  library->impl(qualified_name.c_str(), std::move(kernel));
  return library;
}

bool cond_failed(const Node& node) noexcept {
  node.cond_errors.fetch_add(1, std::memory_order_relaxed);
  if (!node.cond_error_logged.exchange(true, std::memory_order_relaxed)) {
    std::string what = "unknown exception";
    try {
      throw;
    } catch (const c10::Error& e) {
      what = e.what_without_backtrace();
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    log::warn("cond of " + node.id + " (dsl " + node.dsl + ") threw; counted as no match, " +
              "logged once per node: " + what);
  }
  return false;
}

void rethrow_impl_error(const Node& node) {
  const std::string where = "in native-ops override " + node.id + " (dsl " + node.dsl + ")";
  try {
    throw;
  } catch (c10::Error& e) {
    e.add_context(where);
    throw;
  } catch (const std::exception& e) {
    throw Error(std::string(e.what()) + " [" + where + "]");
  }
}

void log_decision(const RouterState& router, const Node* node) {
  log::debug(router.name + ": " + (node ? "runs " + node->id : std::string("falls through to the original kernel")));
}

void throw_no_active_route(const c10::OperatorHandle& op) {
  throw Error("call_original for " + c10::toString(op.operator_name()) +
              " was called outside an override impl of that op: call it from the impl, or "
              "call the op itself");
}

}  // namespace detail

const c10::IValue& BoxedArgs::get(std::string_view name) const {
  const auto& arguments = schema_.arguments();
  std::string names;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].name() == name) {
      return first_[i];
    }
    names += (i ? ", " : "") + arguments[i].name();
  }
  throw Error("schema " + schema_.name() + " has no argument '" + std::string(name) + "'; it has: " + names);
}

void call_original_boxed(const c10::OperatorHandle& op, torch::jit::Stack& stack) {
  const detail::ActiveRoute& route = detail::active_route_for(op);
  route.router->original.callBoxed(op, route.keys, &stack);
}

}  // namespace native_ops
