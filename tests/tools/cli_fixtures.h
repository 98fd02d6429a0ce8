// The `minrnn` binary as the tests of this folder start it, and what they expect of its output.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/paths.h"
#include "tests/run_command.h"
#include "tests/temp_dir.h"

namespace minrnn::testing {

inline std::string minrnn_binary() {
  return binary_dir() + "/minrnn";
}

// `minrnn ARGS` with `dir` as the working directory and one torch thread.
inline CommandResult run_minrnn(const TempDir& dir, const std::string& args) {
  return run_program(dir, binary_dir(), "minrnn", args);
}

// The output names every one of `parts`.
inline void expect_output_naming(const CommandResult& r, const std::vector<std::string>& parts) {
  for (const auto& part : parts)
    EXPECT_NE(r.output.find(part), std::string::npos) << "no '" << part << "' in: " << r.output;
}

// A failed command: a non-zero exit and a message naming every one of `parts`.
inline void expect_failure_naming(const CommandResult& r, const std::vector<std::string>& parts) {
  EXPECT_NE(r.exit_code, 0) << r.output;
  expect_output_naming(r, parts);
}

}  // namespace minrnn::testing
