// The README's example: a host C++ relu for contiguous float32 CPU tensors.
#include <iostream>

#include <ATen/ATen.h>
#include <native_ops/native_ops.h>

int main() {
  native_ops::register_op_override<at::_ops::relu>(
      "cpp", c10::DispatchKey::CPU,
      [](const at::Tensor& x) { return x.scalar_type() == at::kFloat && x.is_contiguous(); },
      [](const at::Tensor& x) {
        at::Tensor y = at::empty_like(x);
        const float* in = x.const_data_ptr<float>();
        float* out = y.mutable_data_ptr<float>();
        for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] < 0 ? 0.0f : in[i];  // NaN stays NaN
        return y;
      });
  native_ops::init();  // installs every router, the built-ins' too

  at::relu(at::randn({1000}));               // float32: the override runs
  at::relu(at::randn({1000}, at::kDouble));  // float64: falls through to aten
  const auto node = native_ops::find_node("relu_cpp_0");
  std::cout << node->id << ": " << node->hits << " hit, " << native_ops::graphs().back().fallthroughs
            << " fall-through\n";
}
