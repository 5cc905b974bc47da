// Judges a built-in override with the test kit, as a plugin author would judge theirs.
#include <iostream>

#include <native_ops/native_ops.h>
#include <native_ops/testing/conformance.h>

int main() {
  native_ops::init();
  native_ops::SweepOptions options;
  options.op_symbol = "add_.Tensor";
  options.devices = {c10::DeviceType::CPU};
  const std::vector<native_ops::SampleResult> results = native_ops::run_sweep(native_ops::plan_sweep(options), options);
  size_t passed = 0;
  for (const native_ops::SampleResult& result : results) passed += result.outcome == native_ops::Outcome::passed;
  std::cout << "sweep of add_.Tensor: " << results.size() << " samples, " << passed << " passed\n";
  return !results.empty() && passed == results.size() ? 0 : 1;
}
