#pragma once
// Boxed conds and impls: one calling convention for any operator schema.

#include <cstddef>
#include <functional>
#include <string_view>
#include "native_ops/export.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include "native_ops/verdict.h"

namespace native_ops {

/// A read-only view of a boxed call's arguments, in schema order, without copying.
///
///   native_ops::BoxedCond cond = [](const native_ops::BoxedArgs& args) {
///     return args[0].toTensor().dim() == 2 && args.get("dim").toInt() == -1;
///   };
class NATIVE_OPS_API BoxedArgs {
 public:
  /// `stack` holds the call's arguments as its last schema.arguments().size() entries.
  BoxedArgs(const c10::FunctionSchema& schema, const torch::jit::Stack& stack)
      : schema_(schema), first_(stack.data() + (stack.size() - schema.arguments().size())) {}

  size_t size() const { return schema_.arguments().size(); }
  /// The i-th argument in schema order (unchecked, like std::vector::operator[]).
  const c10::IValue& operator[](size_t i) const { return first_[i]; }
  /// The argument named `name` in the schema; throws native_ops::Error listing the
  /// schema's argument names when there is none.
  const c10::IValue& get(std::string_view name) const;
  const c10::FunctionSchema& schema() const { return schema_; }

 private:
  const c10::FunctionSchema& schema_;
  const c10::IValue* first_;
};

/// Decides whether a boxed override applies to a call (a bool, or a Verdict with the
/// reason it declines). Must not change the arguments.
using BoxedCond = std::function<Verdict(const BoxedArgs& args)>;

/// Runs a boxed override: pops the call's arguments off `stack` and pushes its results,
/// like a boxed kernel of the dispatcher.
using BoxedImpl = std::function<void(const c10::OperatorHandle& op, torch::jit::Stack& stack)>;

/// From inside a boxed impl of `op`: runs the kernel that the router replaced on the
/// arguments on `stack` (popping them, pushing the results). Does not re-enter the
/// router. Throws native_ops::Error when no impl of `op` is running on this thread.
NATIVE_OPS_API void call_original_boxed(const c10::OperatorHandle& op, torch::jit::Stack& stack);

}  // namespace native_ops
