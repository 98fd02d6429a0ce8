// `minrnn`: the command line of the toolkit. Subcommands: train, eval, sweep, report, data,
// collect, bench.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

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

CLI::Validator positive() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        try {
          size_t used = 0;
          if (std::stod(value, &used) > 0 && used == value.size()) return "";
        } catch (const std::exception&) {
        }
        return "expected a number > 0, got '" + value + "'";
      },
      "> 0", "positive");
}

}  // namespace minrnn::cli

// Runtime settings that libgomp and glibc's malloc read when they load, before main: set them and
// start again once. A user's own settings are left alone.
// - OMP_WAIT_POLICY=PASSIVE: OpenMP threads that spin while waiting for work make small models ~20×
//   slower on a busy machine (measured: a 30-step tiny training run took 40 s instead of 2 s with
//   other jobs on the 2 cores, e.g. a sweep running several trainings).
// - MALLOC_*: by default glibc returns every large freed tensor to the kernel and faults its pages
//   in again on the next step; keeping them cut `bench scan --lengths 512` from 50 s to 31 s
//   (system time 31 s → 2 s) and a minGRU layer's training step by ~30% on the 2-core machine.
static void ensure_runtime_environment(char** argv) {
  const char* settings[][2] = {{"OMP_WAIT_POLICY", "PASSIVE"},
                               {"MALLOC_MMAP_THRESHOLD_", "4294967296"},
                               {"MALLOC_TRIM_THRESHOLD_", "68719476736"},
                               {"MALLOC_TOP_PAD_", "1073741824"}};
  bool changed = false;
  for (const auto& [name, value] : settings) {
    if (std::getenv(name) == nullptr) {
      setenv(name, value, 1);
      changed = true;
    }
  }
  if (changed) execv("/proc/self/exe", argv);  // returns only on failure: then carry on as we are
}

int main(int argc, char** argv) {
  ensure_runtime_environment(argv);
  // Past a file size limit (ulimit -f) a write fails with EFBIG, which the writers report naming
  // the file, instead of SIGXFSZ killing the process halfway through a file.
  std::signal(SIGXFSZ, SIG_IGN);
  // Progress lines must reach a log file or a pipe (`| tee`) as they happen, not when a buffer
  // fills.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
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
