// Registers an override of aten::hypot, as a third party would, and checks it routes.
#include <iostream>

#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/full.h>
#include <ATen/ops/hypot.h>
#include <ATen/ops/sqrt.h>
#include <native_ops/native_ops.h>

int main() {
  native_ops::register_dsl(native_ops::make_compiled_in_dsl("vendor", "0.1"));
  const std::string id = native_ops::register_op_override<at::_ops::hypot>(
      "vendor", c10::DispatchKey::CPU, [](const at::Tensor& a, const at::Tensor&) { return a.dim() == 1; },
      [](const at::Tensor& a, const at::Tensor& b) { return at::sqrt(a * a + b * b); });
  native_ops::init();
  const at::Tensor a = at::full({3}, 3.0);
  const at::Tensor b = at::full({3}, 4.0);
  const bool five = at::hypot(a, b).eq(5.0).all().item<bool>();
  const uint64_t hits = native_ops::find_node(id)->hits;
  std::cout << id << " hits=" << hits << " result=" << (five ? "5" : "wrong") << "\n";
  return five && hits == 1 ? 0 : 1;
}
