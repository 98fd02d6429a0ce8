// `minrnn`: the command line of the toolkit. Subcommands: train, eval, sweep, report, data,
// collect, bench.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include <c10/util/Exception.h>

#include "tools/commands.h"

namespace minrnn::cli {

void not_built_yet(CLI::App& sub, const char* issue) {
  sub.allow_extras();
  sub.callback([&sub, issue] {
    throw ExitError{
        2, "minrnn " + sub.get_name() + ": not built yet (tracked in issue " + issue + ")"};
  });
}

}  // namespace minrnn::cli

// OpenMP threads that spin while waiting for work make small models ~20× slower on a busy machine
// (measured: a 30-step tiny training run took 40 s instead of 2 s with other jobs on the 2 cores,
// e.g. a sweep running several trainings). libgomp reads OMP_WAIT_POLICY when it loads, before
// main, so set it and start again once; a user's own setting is left alone.
static void ensure_passive_openmp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then carry on as we are
}

int main(int argc, char** argv) {
  ensure_passive_openmp(argv);
  using namespace minrnn::cli;
  CLI::App app{"minrnn: minGRU/minLSTM decision agents on D4RL MuJoCo datasets, from C++"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "minrnn 0.1");
  add_train_command(app);
  add_eval_command(app);
  add_sweep_command(app);
  add_report_command(app);
  add_data_command(app);
  add_collect_command(app);
  add_bench_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const ExitError& e) {
    std::fprintf(stderr, "%s\n", e.message.c_str());
    return e.code;
  } catch (const c10::Error& e) {  // LibTorch's errors carry a C++ backtrace users need not see
    std::fprintf(stderr, "minrnn: error: %s\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "minrnn: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
