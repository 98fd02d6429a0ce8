// Running a command line in a test, as a user's shell would: stdout and stderr captured together,
// and the exit status; and waiting for what a started one does. Shared by every test folder that
// drives the real binaries.
#pragma once
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>

#include "tests/paths.h"
#include "tests/temp_dir.h"

namespace minrnn::testing {

struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal, or the shell could not start
  std::string output;  // stdout and stderr together
};

// `command` through /bin/sh, with " 2>&1" appended.
inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) result.output.append(buf, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// `BIN_DIR/PROGRAM ARGS` with `dir` as the working directory and one torch thread.
inline CommandResult run_program(const TempDir& dir, const std::string& bin_dir,
                                 const std::string& program, const std::string& args) {
  return run_command("cd '" + dir.path.string() + "' && OMP_NUM_THREADS=1 '" + bin_dir + "/" +
                     program + "' " + args);
}

// Polls `done` (every `poll_ms`) until it is true, or `seconds` have passed: whether it became
// true.
inline bool wait_for(const std::function<bool()>& done, double seconds, int poll_ms = 20) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  return true;
}

// The `minrnn` binary of this build.
inline std::string minrnn_binary() {
  return binary_dir() + "/minrnn";
}

// `minrnn ARGS` with `dir` as the working directory and one torch thread.
inline CommandResult run_minrnn(const TempDir& dir, const std::string& args) {
  return run_program(dir, binary_dir(), "minrnn", args);
}

}  // namespace minrnn::testing
