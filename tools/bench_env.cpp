#include "tools/commands.h"

namespace minrnn::cli {

void add_bench_env(CLI::App& bench) {
  auto* sub = bench.add_subcommand("env", "(not built yet: issue #3)");
  not_built_yet(*sub, "#3");
}

}  // namespace minrnn::cli
