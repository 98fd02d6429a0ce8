// Running a command line in a test, as a user's shell would: stdout and stderr captured together,
// and the exit status. Shared by every test folder that drives the real binaries.
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <string>

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

// The `minrnn` binary of this build.
inline std::string minrnn_binary() {
  return binary_dir() + "/minrnn";
}

// `minrnn ARGS` with `dir` as the working directory and one torch thread.
inline CommandResult run_minrnn(const TempDir& dir, const std::string& args) {
  return run_program(dir, binary_dir(), "minrnn", args);
}

}  // namespace minrnn::testing
