#pragma once
// A call's arguments with every tensor copied into a guarded buffer: its storage span
// (gaps included) between two guard regions filled with a bit pattern. Arguments that
// share a storage (self.add_(self)) share one buffer, so aliasing is kept. After the
// call, anything that changed outside the elements the op may write is a stray write.

#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/stack.h>

#include "native_ops/testing/conformance.h"

namespace native_ops::detail {

class GuardedArguments {
 public:
  /// Copies `arguments` (in schema order); the tensors keep their sizes, strides and
  /// values. Arguments the schema marks as written (Tensor(a!)) may change in their own
  /// elements; nothing else may change at all.
  GuardedArguments(const c10::FunctionSchema& schema, const torch::jit::Stack& arguments);

  /// The arguments to call with (the guarded tensors); each call gets the same tensors, and
  /// a copy of each generator in the sample's state, so that the calls of a random op draw
  /// the same numbers.
  torch::jit::Stack stack() const;
  /// The first element of each guarded buffer that changed where it must not, described.
  std::optional<Mismatch> stray_write() const;
  /// Whether the impl wrote before or after the spans of the arguments' storages (into
  /// the guard regions): run on unguarded tensors, such a write corrupts the heap.
  bool wrote_past_spans() const;

 private:
  // One buffer: the storage span of every argument on one storage.
  struct Guarded {
    std::string names;           // the arguments on it: "self", "self and other"
    at::Storage source;          // the sample's storage it copies
    c10::TensorOptions options;  // its dtype and device
    int64_t first = 0;           // the storage span copied: [first, last)
    int64_t last = 0;
    at::Tensor buffer;
    at::Tensor before;   // the buffer's bits before the call
    at::Tensor allowed;  // bool, per buffer element: the op may write it
  };
  torch::jit::Stack arguments_;
  std::vector<Guarded> guarded_;
};

/// Whether the schema marks the argument (or return) as written: Tensor(a!).
bool is_written(const c10::Argument& argument);

/// One past the largest storage offset a view reaches, relative to its own offset: the
/// storage span it covers, gaps included (0 when it has no element).
int64_t span_of(const at::Tensor& tensor);

}  // namespace native_ops::detail
