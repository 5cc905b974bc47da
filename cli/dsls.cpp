// native-ops dsls
#include <iomanip>
#include <iostream>

#include "commands.h"
#include "native_ops/dsl.h"
#include "native_ops/report.h"

namespace native_ops::cli {

void add_dsls_command(CLI::App& app, const GlobalOptions& options) {
  CLI::App* command = app.add_subcommand("dsls", "List the DSLs: available or not, version, and the fix when not");
  command->callback([&options] {
    options.start();
    if (options.json) {
      std::cout << dsls_json() << "\n";
      return;
    }
    const bool color = options.use_color();
    std::cout << std::left << std::setw(10) << "dsl" << std::setw(14) << "available"
              << "version" << std::right << "\n";
    for (const Dsl* dsl : dsls()) {
      const bool available = dsl->runtime_available();
      std::cout << std::left << std::setw(10) << dsl->name() << std::right
                << paint(available ? "yes" : "no", available ? "active" : "unavailable", color)
                << std::string(available ? 11 : 12, ' ') << dsl->runtime_version() << "\n";
      if (!available) std::cout << "          why: " << dsl->unavailable_reason() << "\n";
    }
  });
}

}  // namespace native_ops::cli
