#include "tools/commands.h"

namespace minrnn::cli {

void add_eval_command(CLI::App& app) {
  auto* sub = app.add_subcommand("eval", "(not built yet: issue #6)");
  not_built_yet(*sub, "#6");
}

}  // namespace minrnn::cli
