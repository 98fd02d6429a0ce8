#include "tools/commands.h"

namespace minrnn::cli {

void add_bench_train(CLI::App& bench) {
  auto* sub = bench.add_subcommand("train", "(not built yet: issue #6)");
  not_built_yet(*sub, "#6");
}

}  // namespace minrnn::cli
