#pragma once
// Typed (unboxed) overrides, for hot ops: conds and impls take the op's C++ arguments,
// and the router costs a few nanoseconds per call.
//
//   #include <ATen/ops/bmm_ops.h>
//   native_ops::register_op_override<at::_ops::bmm>("cpp", c10::DispatchKey::CPU,
//       [](const at::Tensor& a, const at::Tensor& b) { return a.size(2) == 1; },
//       [](const at::Tensor& a, const at::Tensor& b) { return outer_product(a, b); });
//
// A cond returns a bool, or a native_ops::Verdict that says why it declines (verdict.h).
//
// The argument types are those of `at::_ops::<op>::schema` (SymInt where the schema has
// SymInt). A graph is typed or boxed for good: the first registration decides.

#include <string>
#include <utility>
#include "native_ops/export.h"

#include <torch/library.h>

#include "native_ops/detail/registration.h"
#include "native_ops/registry.h"

namespace native_ops {

namespace detail {

template <class Sig>
struct TypedSignature;

template <class Ret, class... Args>
struct TypedSignature<Ret(Args...)> {
  using Cond = std::function<Verdict(Args...)>;
  using Impl = std::function<Ret(Args...)>;

  static torch::CppFunction router_kernel(const RouterState* router) {
    return torch::CppFunction([router](c10::DispatchKeySet keys, Args... args) -> Ret {
      return typed_route<Ret, Args...>(*router, keys, std::forward<Args>(args)...);
    });
  }

  template <class Op>
  static Ret call_original(Args... args) {
    static const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(Op::name, Op::overload_name);
    const ActiveRoute& route = active_route_for(op);
    return route.router->original.template call<Ret, Args...>(route.router->op, route.keys,
                                                              std::forward<Args>(args)...);
  }
};

/// "aten::add_" + "Tensor" -> "add_.Tensor"; "aten::bmm" + "" -> "bmm".
NATIVE_OPS_API std::string op_symbol_of(std::string_view qualified_name, std::string_view overload);

}  // namespace detail

/// The cond type of a typed override of `Op` (an `at::_ops::<op>` struct).
template <class Op>
using TypedCond = typename detail::TypedSignature<typename Op::schema>::Cond;
/// The impl type of a typed override of `Op`.
template <class Op>
using TypedImpl = typename detail::TypedSignature<typename Op::schema>::Impl;

/// Registers a typed override of `Op` at `dispatch_key`; returns its node id. Same rules
/// and refusals as the boxed register_op_override() in registry.h. Pass an empty cond
/// (`{}`) with `Options::unconditional_override`.
template <class Op>
std::string register_op_override(std::string_view dsl, c10::DispatchKey dispatch_key, TypedCond<Op> cond,
                                 TypedImpl<Op> impl, Options options = {}) {
  using Signature = detail::TypedSignature<typename Op::schema>;
  auto callables = std::make_unique<detail::TypedCallables<typename Op::schema>>();
  const bool has_cond = static_cast<bool>(cond);
  callables->cond = std::move(cond);
  callables->impl = std::move(impl);
  const std::string_view qualified(Op::name);
  const std::string op_symbol = detail::op_symbol_of(qualified, Op::overload_name);
  return detail::register_node(detail::NodeRequest{dsl, qualified.substr(0, qualified.find("::")), op_symbol,
                                                   dispatch_key, has_cond, std::move(callables),
                                                   &Signature::router_kernel, /*typed=*/true, std::move(options)});
}

/// From inside an impl of `Op`: runs the kernel the router replaced, without re-entering
/// the router or the dispatcher. Throws native_ops::Error outside such an impl.
///
///   [](const at::Tensor& a, const at::Tensor& b) {
///     return native_ops::call_original<at::_ops::bmm>(a, b).relu_();
///   }
template <class Op, class... A>
decltype(auto) call_original(A&&... args) {
  return detail::TypedSignature<typename Op::schema>::template call_original<Op>(std::forward<A>(args)...);
}

}  // namespace native_ops
