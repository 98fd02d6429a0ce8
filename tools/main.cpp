// `minrnn`: the command line of the toolkit. Subcommands: train, eval, sweep, report, data,
// collect, bench.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <c10/util/Exception.h>

#include "io/dir_lock.h"
#include "tools/commands.h"
#include "tools/runtime_env.h"

// Sets what libgomp and glibc's malloc read when they load (tools/runtime_env.h) and starts
// again once. A user's own settings are left alone.
static void ensure_runtime_environment(char** argv) {
  const auto settings = minrnn::cli::runtime_settings();
  for (const auto& [name, value] : settings) setenv(name.c_str(), value.c_str(), 1);
  if (!settings.empty()) execv("/proc/self/exe", argv);  // returns only on failure: carry on
}

// MINRNN_PARENT_PID=PID (set by a Slurm sweep's batch script, sweep/slurm_script.cpp): SIGTERM
// when that parent dies, by any signal, SIGKILL too, so that a run never goes on outside its job;
// minrnn then checkpoints and exits 75, as a local sweep's runs do (sweep/spawn.cpp).
static void die_with_parent_if_asked() {
  const char* parent = std::getenv("MINRNN_PARENT_PID");
  if (parent == nullptr) return;
  const long expected = std::atol(parent);
  unsetenv("MINRNN_PARENT_PID");  // for this process only, not the commands it may start
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != expected) raise(SIGTERM);  // the parent died before prctl took effect
}

int main(int argc, char** argv) {
  ensure_runtime_environment(argv);
  die_with_parent_if_asked();
  // Past a file size limit (ulimit -f) a write fails with EFBIG, which the writers report naming
  // the file, instead of SIGXFSZ killing the process halfway through a file.
  std::signal(SIGXFSZ, SIG_IGN);
  // Progress lines must reach a log file or a pipe (`| tee`) as they happen, not when a buffer
  // fills.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  using namespace minrnn::cli;
  keep_command_line(argc, argv);
  CLI::App app{"minrnn: minGRU/minLSTM decision agents on D4RL MuJoCo datasets, from C++"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "minrnn " MINRNN_VERSION);
  add_train_command(app);
  add_eval_command(app);
  add_sweep_command(app);
  add_report_command(app);
  add_compare_command(app);
  add_data_command(app);
  add_collect_command(app);
  add_bench_command(app);
  one_value_per_option(app);
  if (const std::string unknown = unknown_subcommand(app, argc, argv); !unknown.empty()) {
    std::fprintf(stderr, "minrnn: error: %s\n", unknown.c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "minrnn: error: %s\n", parse_error_message(app, e).c_str());
    return 2;
  } catch (const ExitError& e) {
    if (!e.message.empty()) std::fprintf(stderr, "%s\n", e.message.c_str());
    return e.code;
  } catch (const minrnn::io::DirBusy& e) {
    std::fprintf(stderr, "minrnn: error: %s\n", e.what());
    return minrnn::io::kExitDirBusy;
  } catch (const c10::Error& e) {  // LibTorch's errors carry a C++ backtrace users need not see
    std::fprintf(stderr, "minrnn: error: %s\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "minrnn: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
