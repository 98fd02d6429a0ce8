// `minrnn bench <what>`: speed measurements, printed and written as CSV under runs/bench/; with
// --record also appended to docs/benchmarks.md. The benchmarks themselves are in tools/bench/.
#include "tools/commands.h"

namespace minrnn::cli {

void add_bench_scan(CLI::App& bench);     // tools/bench/scan.cpp
void add_bench_env(CLI::App& bench);      // tools/bench/env.cpp
void add_bench_train(CLI::App& bench);    // tools/bench/train.cpp
void add_bench_eval(CLI::App& bench);     // tools/bench/eval.cpp
void add_bench_policy(CLI::App& bench);   // tools/bench/policy.cpp
void add_bench_figure1(CLI::App& bench);  // tools/bench/figure1.cpp

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand(
      "bench",
      "Benchmarks (printed, numbers in runs/bench/*.csv; --record appends to docs/benchmarks.md)");
  bench->require_subcommand(1);
  add_bench_scan(*bench);
  add_bench_env(*bench);
  add_bench_train(*bench);
  add_bench_eval(*bench);
  add_bench_policy(*bench);
  add_bench_figure1(*bench);
}

}  // namespace minrnn::cli
