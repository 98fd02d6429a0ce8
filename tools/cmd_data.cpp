#include "tools/commands.h"

namespace minrnn::cli {

void add_data_command(CLI::App& app) {
  auto* sub = app.add_subcommand("data", "(not built yet: issue #4)");
  not_built_yet(*sub, "#4");
}

}  // namespace minrnn::cli
