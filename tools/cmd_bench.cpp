// `minrnn bench <what>`: speed measurements, printed and written as CSV under runs/bench/; with
// --record also appended to docs/benchmarks.md. The benchmarks themselves are in tools/bench/,
// each in a namespace of its own (the CLI is a unity build: their helpers share names).
#include "tools/commands.h"

namespace minrnn::cli {

// Each adds its subcommand to `bench`.
namespace bench_scan {
void add(CLI::App& bench);
}  // namespace bench_scan
namespace bench_env {
void add(CLI::App& bench);
}  // namespace bench_env
namespace bench_train {
void add(CLI::App& bench);
}  // namespace bench_train
namespace bench_pack {
void add(CLI::App& bench);
}  // namespace bench_pack
namespace bench_pack_limits {
void add(CLI::App& bench);
}  // namespace bench_pack_limits
namespace bench_eval {
void add(CLI::App& bench);
}  // namespace bench_eval
namespace bench_policy {
void add(CLI::App& bench);
}  // namespace bench_policy
namespace bench_figure1 {
void add(CLI::App& bench);
}  // namespace bench_figure1

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand(
      "bench",
      "Benchmarks (printed, numbers in runs/bench/*.csv; --record appends to docs/benchmarks.md)");
  bench->require_subcommand(1);
  bench_scan::add(*bench);
  bench_env::add(*bench);
  bench_train::add(*bench);
  bench_pack::add(*bench);
  bench_pack_limits::add(*bench);
  bench_eval::add(*bench);
  bench_policy::add(*bench);
  bench_figure1::add(*bench);
}

}  // namespace minrnn::cli
