#include "support.h"

#include <cmath>
#include <mutex>
#include <sstream>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/_to_copy.h>

namespace native_ops::testing {

namespace {

class TestDsl final : public Dsl {
 public:
  TestDsl(std::string name, bool available) : name_(std::move(name)), available_(available) {}
  std::string_view name() const override { return name_; }
  bool runtime_available() const override { return available_; }
  std::string runtime_version() const override { return available_ ? "1.0" : ""; }
  std::string unavailable_reason() const override {
    return available_ ? "" : "the ghost runtime is not installed; install ghost-runtime";
  }

 private:
  std::string name_;
  bool available_;
};

at::Tensor as_double(const at::Tensor& t) { return at::_to_copy(t, at::kDouble).contiguous(); }

std::pair<double, double> tolerances(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf: return {1e-3, 1e-5};
    case at::kBFloat16: return {1.6e-2, 1e-5};
    case at::kFloat: return {1.3e-6, 1e-5};
    default: return {1e-7, 1e-7};
  }
}

::testing::AssertionResult compare(const at::Tensor& actual, const at::Tensor& expected, double rtol, double atol) {
  if (actual.sizes() != expected.sizes()) {
    std::ostringstream text;
    text << "sizes differ: " << actual.sizes() << " vs " << expected.sizes();
    return ::testing::AssertionFailure() << text.str();
  }
  if (actual.scalar_type() != expected.scalar_type()) {
    return ::testing::AssertionFailure() << "dtypes differ: " << actual.scalar_type() << " vs "
                                         << expected.scalar_type();
  }
  const at::Tensor a = as_double(actual);
  const at::Tensor e = as_double(expected);
  const double* pa = a.data_ptr<double>();
  const double* pe = e.data_ptr<double>();
  int64_t bad = 0;
  int64_t first = -1;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const bool both_nan = std::isnan(pa[i]) && std::isnan(pe[i]);
    const bool ok =
        both_nan || pa[i] == pe[i] ||
        (std::isfinite(pa[i]) && std::isfinite(pe[i]) && std::abs(pa[i] - pe[i]) <= atol + rtol * std::abs(pe[i]));
    if (!ok) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << a.numel() << " elements differ; first at flat index "
                                       << first << ": " << pa[first] << " vs " << pe[first];
}

}  // namespace

void register_test_dsls() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_dsl(std::make_unique<TestDsl>("alpha", true));
    register_dsl(std::make_unique<TestDsl>("beta", true));
    register_dsl(std::make_unique<TestDsl>("ghost", false));
  });
}

::testing::AssertionResult close(const at::Tensor& actual, const at::Tensor& expected) {
  const auto [rtol, atol] = tolerances(expected.scalar_type());
  return compare(actual, expected, rtol, atol);
}

::testing::AssertionResult identical(const at::Tensor& actual, const at::Tensor& expected) {
  return compare(actual, expected, 0.0, 0.0);
}

GraphInfo graph(const std::string& op_symbol, c10::DispatchKey key) {
  for (GraphInfo& info : graphs()) {
    if (info.op_symbol == op_symbol && info.key == key) return info;
  }
  ADD_FAILURE() << "no graph for " << op_symbol;
  return {};
}

uint64_t hits(const std::string& node_id) {
  const auto node = find_node(node_id);
  EXPECT_TRUE(node.has_value()) << "no node " << node_id;
  return node ? node->hits : 0;
}

uint64_t cond_errors(const std::string& node_id) {
  const auto node = find_node(node_id);
  EXPECT_TRUE(node.has_value()) << "no node " << node_id;
  return node ? node->cond_errors : 0;
}

uint64_t fallthroughs(const std::string& op_symbol, c10::DispatchKey key) { return graph(op_symbol, key).fallthroughs; }

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no native_ops::Error";
  return "";
}

std::string computed_table(const std::string& op_symbol) {
  const size_t dot = op_symbol.find('.');
  const std::string name = "aten::" + op_symbol.substr(0, dot);
  const std::string overload = dot == std::string::npos ? "" : op_symbol.substr(dot + 1);
  return c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), overload.c_str()).dumpComputedTable();
}

at::Tensor aten_reference(const std::string& op_symbol, const std::function<at::Tensor()>& fn) {
  Filter filter{"", op_symbol, std::nullopt};
  deregister_overrides(filter);
  at::Tensor result = fn();
  reenable_overrides(filter);
  return result;
}

}  // namespace native_ops::testing
