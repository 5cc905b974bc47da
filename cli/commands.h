#pragma once
// The subcommands of native-ops, one source file each; main.cpp wires them up.

#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace native_ops::cli {

/// Options every subcommand sees, set by main.cpp before a subcommand's callback runs.
struct GlobalOptions {
  bool json = false;               // --json: print the documented JSON document
  std::string color = "auto";      // --color auto|always|never
  std::vector<std::string> loads;  // --load LIB, repeatable
  std::string log_level;           // --log-level, overrides NATIVE_OPS_LOG
  std::string policy;              // --policy FILE: the ordering policy this command runs under

  /// Whether to print ANSI colours: --color always, or auto on a terminal without NO_COLOR.
  bool use_color() const;
  /// Sets the log level, loads plugins, calls native_ops::init() and applies --policy
  /// (unless told not to: `reorder` applies it itself, to show what it changes).
  void start(bool apply_policy = true) const;
};

/// Exit codes, documented in native-ops(1).
enum ExitCode { kOk = 0, kError = 1, kUsage = 2 };

/// A command that ran but found a failure (a conformance sweep with failed samples):
/// main prints the message and exits with kError.
class CommandFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void add_list_command(CLI::App& app, const GlobalOptions& options);
void add_dsls_command(CLI::App& app, const GlobalOptions& options);
void add_explain_command(CLI::App& app, const GlobalOptions& options);
void add_reorder_command(CLI::App& app, const GlobalOptions& options);
void add_test_command(CLI::App& app, const GlobalOptions& options);
void add_bench_command(CLI::App& app, const GlobalOptions& options);
void add_tune_command(CLI::App& app, const GlobalOptions& options);

/// `text` in the colour that goes with a node state ("active", "disabled", ...), if asked.
std::string paint(const std::string& text, const std::string& state, bool color);

}  // namespace native_ops::cli
