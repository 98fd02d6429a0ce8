#include "tools/commands.h"

namespace minrnn::cli {

void add_sweep_command(CLI::App& app) {
  auto* sub = app.add_subcommand("sweep", "(not built yet: issue #6)");
  not_built_yet(*sub, "#6");
}

}  // namespace minrnn::cli
