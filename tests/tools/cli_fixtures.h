// What the tests of this folder expect of the `minrnn` binary's output (tests/run_command.h starts
// it).
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/run_command.h"

namespace minrnn::testing {

// A hopper agent of 4 steps on d.hdf5 (`data synth d.hdf5 --env hopper`): trains in seconds.
inline constexpr const char* kFourStepConfig =
    "dataset: d.hdf5\nenv: hopper\nbackbone: mingru\nn_layers: 1\nembed_dim: 16\n"
    "context_len: 5\nbatch_size: 4\nmax_steps: 4\nwarmup_steps: 1\neval_every: 0\n"
    "eval_episodes: 1\ncheckpoint_every: 2\nlog_every: 1\ntarget_return: 3600\n";

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
