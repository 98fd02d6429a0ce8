#include "tools/commands.h"

namespace minrnn::cli {

void add_collect_command(CLI::App& app) {
  auto* sub = app.add_subcommand("collect", "(not built yet: issue #7)");
  not_built_yet(*sub, "#7");
}

}  // namespace minrnn::cli
