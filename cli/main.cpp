// native-ops: see and steer the overrides native-ops routes.
// Exit codes: 0 success, 1 an error (message on stderr), 2 bad command line.
#include <unistd.h>
#include <cstdlib>
#include <iostream>

#include "commands.h"
#include "native_ops/plugin.h"
#include "native_ops/policy.h"
#include "native_ops/registry.h"

namespace native_ops::cli {

bool GlobalOptions::use_color() const {
  if (color == "always") return true;
  if (color == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  return (no_color == nullptr || *no_color == '\0') && isatty(STDOUT_FILENO);
}

void GlobalOptions::start(bool apply_policy) const {
  // Through the variable, so that init()'s own messages are logged at that level too.
  if (!log_level.empty()) setenv("NATIVE_OPS_LOG", log_level.c_str(), 1);
  for (const std::string& path : loads) load_plugin(path);
  native_ops::init();
  // Apply::now: no op runs yet, so the dispatcher ends up as init() with the policy leaves it.
  if (apply_policy && !policy.empty()) native_ops::apply_policy(load_policy(policy), native_ops::Apply::now);
}

std::string paint(const std::string& text, const std::string& state, bool color) {
  if (!color) return text;
  const char* code = state == "active" ? "32" : state == "unavailable" ? "31" : state == "fires" ? "1;32" : "33";
  return std::string("\033[") + code + "m" + text + "\033[0m";
}

}  // namespace native_ops::cli

int main(int argc, char** argv) {
  using namespace native_ops::cli;
  CLI::App app{"native-ops: PyTorch kernel overrides, routed natively"};
  app.require_subcommand(1);
  // Global options may also follow the subcommand: `native-ops test --json`.
  app.fallthrough();
  GlobalOptions options;
  app.add_flag("--json", options.json, "Print the documented JSON document instead of a table");
  app.add_option("--color", options.color, "Colour the output: auto (on a terminal, unless NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option("--load", options.loads, "Load a plugin library (repeatable); NATIVE_OPS_PLUGINS adds more")
      ->check(CLI::ExistingFile);
  app.add_option("--policy", options.policy,
                 "Run under this ordering policy (JSON, native-ops-policy(5)); `reorder` shows what it changes");
  app.add_option("--log-level", options.log_level, "Log level of native_dsl: trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  add_list_command(app, options);
  add_dsls_command(app, options);
  add_explain_command(app, options);
  add_reorder_command(app, options);
  add_test_command(app, options);
  add_bench_command(app, options);
  add_tune_command(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kOk : kUsage;
  } catch (const std::exception& e) {  // native_ops::Error, or an error from libtorch
    std::cerr << "native-ops: " << e.what() << "\n";
    return kError;
  } catch (...) {  // from a plugin's or an ordering function's code
    std::cerr << "native-ops: something that is not a std::exception was thrown (by a plugin?)\n";
    return kError;
  }
  return kOk;
}
