// `minrnn`: the command line of the toolkit. Subcommands: train, eval, sweep, report, data,
// collect, bench.
#include <cstdio>
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

int main(int argc, char** argv) {
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
