// Guarded argument buffers for conformance sweeps.
#include "testing/guarded_arguments.h"

#include <ATen/TensorIndexing.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>

#include "native_ops/node_access.h"

namespace native_ops::detail {

namespace {

// Elements of guard before and after each tensor's span: more than any vector width, so
// an overrun by a whole vector is caught too.
constexpr int64_t kGuardElements = 64;

// The storage offsets (from the view's start) of every element of a view, on its device:
// the elements a written argument may change.
at::Tensor element_offsets(const at::Tensor& tensor) {
  const auto options = at::TensorOptions().dtype(at::kLong).device(tensor.device());
  auto offsets = at::zeros(tensor.sizes(), options);
  for (int64_t d = 0; d < tensor.dim(); ++d) {
    std::vector<int64_t> shape(tensor.dim(), 1);
    shape[d] = tensor.size(d);
    offsets = offsets + at::arange(tensor.size(d), options).view(shape) * tensor.stride(d);
  }
  return offsets.reshape({-1});
}

// The same bits reinterpreted as an integer tensor of the element's size.
at::Tensor bits_of(const at::Tensor& tensor) {
  switch (tensor.element_size()) {
    case 1: return tensor.view(at::kByte);
    case 2: return tensor.view(at::kShort);
    case 4: return tensor.view(at::kInt);
    default: return tensor.view(at::kLong);
  }
}

}  // namespace

bool is_written(const c10::Argument& argument) {
  return argument.alias_info() != nullptr && argument.alias_info()->isWrite();
}

int64_t span_of(const at::Tensor& tensor) {
  if (tensor.numel() == 0) return 0;
  int64_t last = 0;
  for (int64_t d = 0; d < tensor.dim(); ++d) last += (tensor.size(d) - 1) * tensor.stride(d);
  return last + 1;
}

torch::jit::Stack GuardedArguments::stack() const {
  torch::jit::Stack stack = arguments_;
  for (c10::IValue& value : stack) {
    if (value.isGenerator()) value = value.toGenerator().clone();
  }
  return stack;
}

// The buffers are made and checked by aten's own kernels (routing bypassed), on their
// device: an override never judges its own guards, and a large sample's buffers do not
// cross to the host.
GuardedArguments::GuardedArguments(const c10::FunctionSchema& schema, const torch::jit::Stack& arguments) {
  const BypassRouting bypass;
  auto is_tensor = [](const c10::IValue& value) { return value.isTensor() && value.toTensor().defined(); };
  auto name_of = [&](size_t i) {
    return i < schema.arguments().size() ? schema.arguments()[i].name() : "argument " + std::to_string(i);
  };
  // Group the tensors by storage and find each storage's span.
  std::vector<size_t> group_of(arguments.size(), 0);
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (!is_tensor(arguments[i])) continue;
    const at::Tensor& tensor = arguments[i].toTensor();
    const int64_t first = tensor.storage_offset();
    const int64_t last = first + span_of(tensor);
    size_t g = 0;
    while (g < guarded_.size() && !(guarded_[g].source.is_alias_of(tensor.storage()) &&
                                    guarded_[g].options.dtype() == tensor.options().dtype())) {
      ++g;
    }
    if (g == guarded_.size()) {
      guarded_.push_back({name_of(i), tensor.storage(), tensor.options(), first, last, {}, {}, {}});
    } else {
      guarded_[g].names += " and " + name_of(i);
      guarded_[g].first = std::min(guarded_[g].first, first);
      guarded_[g].last = std::max(guarded_[g].last, last);
    }
    group_of[i] = g;
  }
  // Copy each span between guards.
  for (Guarded& g : guarded_) {
    const int64_t span = g.last - g.first;
    g.buffer = at::empty({span + 2 * kGuardElements}, g.options);
    bits_of(g.buffer).fill_(0x5A);  // a bit pattern no kernel writes by chance (a tiny denormal as a float)
    if (span > 0) {
      const at::Tensor source = at::empty({0}, g.options).set_(g.source, g.first, {span}, {1});
      g.buffer.narrow(0, kGuardElements, span).copy_(source);
    }
    g.allowed = at::zeros({g.buffer.numel()}, g.options.dtype(at::kBool));
  }
  // The views, and the elements written arguments may change.
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (!is_tensor(arguments[i])) {
      arguments_.push_back(arguments[i]);
      continue;
    }
    const at::Tensor& tensor = arguments[i].toTensor();
    Guarded& g = guarded_[group_of[i]];
    const int64_t offset = kGuardElements + tensor.storage_offset() - g.first;
    arguments_.push_back(g.buffer.as_strided(tensor.sizes(), tensor.strides(), offset));
    const bool written = i < schema.arguments().size() && is_written(schema.arguments()[i]);
    if (written && tensor.numel() > 0) g.allowed.index_put_({element_offsets(tensor) + offset}, true);
  }
  for (Guarded& g : guarded_) g.before = bits_of(g.buffer).clone();
}

std::optional<Mismatch> GuardedArguments::stray_write() const {
  const BypassRouting bypass;
  for (const Guarded& g : guarded_) {
    const at::Tensor changed = bits_of(g.buffer) != g.before;
    const at::Tensor stray = changed & g.allowed.logical_not();
    if (!stray.any().item<bool>()) continue;
    const int64_t first = stray.nonzero().select(1, 0)[0].item<int64_t>();
    const int64_t relative = first - kGuardElements;
    const int64_t span = g.last - g.first;
    const std::string where = relative < 0 ? std::to_string(-relative) + " elements before its first element"
                              : relative >= span
                                  ? std::to_string(relative - span + 1) + " elements after its last element"
                                  : "between its elements (storage offset " + std::to_string(relative + g.first) + ")";
    const bool writable = g.allowed.any().item<bool>();
    Mismatch mismatch;
    mismatch.check = "guard";
    mismatch.message = "wrote outside its outputs: the storage of " + g.names + " changed " + where +
                       (writable ? "" : ", and the op must not write it at all") + "; " +
                       std::to_string(stray.sum().item<int64_t>()) + " stray elements";
    return mismatch;
  }
  return std::nullopt;
}

bool GuardedArguments::wrote_past_spans() const {
  const BypassRouting bypass;
  for (const Guarded& g : guarded_) {
    const at::Tensor changed = bits_of(g.buffer) != g.before;
    const int64_t after = kGuardElements + (g.last - g.first);
    if (changed.slice(0, 0, kGuardElements).any().item<bool>() ||
        changed.slice(0, std::min(after, changed.size(0))).any().item<bool>()) {
      return true;
    }
  }
  return false;
}

}  // namespace native_ops::detail
