#pragma once
// What the typed and boxed registration calls hand to the registry. Internal.

#include <memory>
#include <string>
#include <string_view>
#include "native_ops/export.h"

#include <torch/library.h>

#include "native_ops/detail/router.h"
#include "native_ops/registry.h"

namespace native_ops::detail {

/// Makes the dispatcher kernel of a router: typed for graphs registered through the
/// typed API, boxed otherwise.
using RouterKernelFactory = torch::CppFunction (*)(const RouterState* router);

struct NodeRequest {
  std::string_view dsl;
  std::string_view lib_symbol;
  std::string_view op_symbol;
  c10::DispatchKey key;
  bool has_cond;
  std::unique_ptr<Callables> callables;
  RouterKernelFactory make_router_kernel;
  bool typed;
  Options options;
};

/// Validates and records one node, and installs its router after init(); returns its id.
NATIVE_OPS_API std::string register_node(NodeRequest request);

}  // namespace native_ops::detail
