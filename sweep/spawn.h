// Child processes: the runs of a local sweep (sweep/local_pool.cpp), and the Slurm commands the
// Slurm backend asks (sweep/slurm.cpp).
#pragma once
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace minrnn::sweep {

// Starts `exe args...` with stdout and stderr appended to `log` (after a "$ minrnn ..." line) and
// OMP/MKL limited to `threads`. The child gets SIGTERM when the sweep dies, by any signal.
pid_t spawn(const std::string& exe, const std::vector<std::string>& args, const std::string& log,
            int threads);

// A program run without a shell, found on PATH: its exit status (127 when it could not be started;
// 128 + N when signal N ended it), its wait status (io::wait_status_text says it) and what it
// printed. Past `timeout` it is killed (with what it started) and timed_out is set.
struct CommandOutput {
  int exit_code = -1;
  int wait_status = -1;
  bool timed_out = false;
  std::string out, err;
};
CommandOutput run_command(const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout = std::chrono::hours(24));
// The program's path on PATH, "" when there is none.
std::string find_on_path(const std::string& program);

}  // namespace minrnn::sweep
