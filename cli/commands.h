#pragma once
// One subcommand per source file: each adds itself to the CLI11 app.

#include <CLI/CLI.hpp>

namespace native_ops::cli {

/// `native-ops list`: every (op, key) graph and its nodes.
void add_list_command(CLI::App& app);

}  // namespace native_ops::cli
