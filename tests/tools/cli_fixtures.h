// What the tests of this folder expect of the `minrnn` binary's output (tests/run_command.h starts
// it).
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/run_command.h"

namespace minrnn::testing {

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
