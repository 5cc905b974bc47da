// native-ops: see and steer the overrides native-ops routes.
// Exit codes: 0 success, 1 an error (message on stderr), 2 bad command line.
#include <iostream>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"native-ops: PyTorch kernel overrides, routed natively"};
  app.require_subcommand(1);
  native_ops::cli::add_list_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception& e) {  // native_ops::Error, or an error from libtorch
    std::cerr << "native-ops: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
