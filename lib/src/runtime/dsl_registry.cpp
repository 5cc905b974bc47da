// The DSL registry. The built-in DSLs come first, in the DSL table's order
// (lib/src/dsls/dsls.cmake); plugins add theirs with register_dsl().
#include <algorithm>
#include <mutex>

#include "native_ops/dsl.h"
#include "native_ops/error.h"
#include "runtime/builtins.h"

namespace native_ops {

namespace {

struct DslRegistry {
  std::mutex mutex;
  std::vector<std::unique_ptr<Dsl>> dsls;
};

DslRegistry& dsl_registry() {
  static DslRegistry* instance = [] {
    auto* made = new DslRegistry;
    made->dsls = detail::make_builtin_dsls();
    return made;
  }();
  return *instance;
}

class CompiledInDsl final : public Dsl {
 public:
  CompiledInDsl(std::string name, std::string version) : name_(std::move(name)), version_(std::move(version)) {}
  std::string_view name() const override { return name_; }
  bool runtime_available() const override { return true; }
  std::string runtime_version() const override { return version_; }
  std::string unavailable_reason() const override { return ""; }
  bool kernels_load_at_run_time() const override { return false; }

 private:
  std::string name_;
  std::string version_;
};

}  // namespace

std::unique_ptr<Dsl> make_compiled_in_dsl(std::string name, std::string version) {
  return std::make_unique<CompiledInDsl>(std::move(name), std::move(version));
}

void register_dsl(std::unique_ptr<Dsl> dsl) {
  DslRegistry& r = dsl_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& known : r.dsls) {
    if (known->name() == dsl->name()) {
      throw Error("dsl '" + std::string(dsl->name()) + "' is already registered: pick another name");
    }
  }
  r.dsls.push_back(std::move(dsl));
}

const Dsl* find_dsl(std::string_view name) {
  DslRegistry& r = dsl_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& dsl : r.dsls) {
    if (dsl->name() == name) return dsl.get();
  }
  return nullptr;
}

std::vector<const Dsl*> dsls() {
  DslRegistry& r = dsl_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const Dsl*> all;
  for (const auto& dsl : r.dsls) all.push_back(dsl.get());
  return all;
}

std::vector<std::string> dsl_names() {
  std::vector<std::string> names;
  for (const Dsl* dsl : dsls()) names.emplace_back(dsl->name());
  return names;
}

size_t disable_dsl(std::string_view name, Apply apply) {
  return deregister_overrides(Filter{std::string(name), "", std::nullopt}, apply);
}

size_t enable_dsl(std::string_view name, Apply apply) {
  return reenable_overrides(Filter{std::string(name), "", std::nullopt}, apply);
}

}  // namespace native_ops
