#include "tools/commands.h"

namespace minrnn::cli {

void add_bench_scan(CLI::App& bench) {
  auto* sub = bench.add_subcommand("scan", "(not built yet: issue #2)");
  not_built_yet(*sub, "#2");
}

}  // namespace minrnn::cli
