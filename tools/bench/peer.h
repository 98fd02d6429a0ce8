// The peer beside `minrnn bench train`: another implementation's training step timed in the same
// run as ours (CORL's dt.py: `--peer ../shared/peer/run.sh`), so that a ratio is taken under one
// load.
#pragma once
#include <cmath>
#include <string>
#include <vector>

namespace minrnn::cli {

// Runs `command train SECONDS` and reads "= X steps/s" from what it prints (which it passes on to
// stderr as it comes); throws naming the command where it fails or prints no rate.
double run_peer(const std::string& command, double seconds);

// Peer rates in the order they ran: one more than the rounds, round r between runs r and r + 1.
struct PeerRuns {
  std::vector<double> steps_per_s;
  bool any() const { return !steps_per_s.empty(); }
  double around(int round) const {
    return any() ? 0.5 * (steps_per_s[round] + steps_per_s[round + 1]) : NAN;
  }
};

}  // namespace minrnn::cli
