// A clean stop on SIGTERM or SIGINT (Ctrl-C, Slurm's preemption, a sweep being stopped), SIGHUP
// (the terminal closed) or SIGPIPE (the reader of the output is gone: `| head`, quitting `| less`,
// a Ctrl-C that ends `| tee`); the last two stay ignored where the process was started with them
// ignored (nohup, systemd): the handler only records the signal;
// long loops (training, SAC, collection) poll stop_requested() between steps, finish the step they
// are in, write their checkpoint and return, and the command exits with kExitInterrupted.
//
//   rl::install_stop_handlers();            // once, in the command that can stop cleanly
//   while (...) { step(); if (rl::stop_requested()) { checkpoint(); break; } }
#pragma once
#include <array>
#include <csignal>
#include <string>

#include "io/stop_requested.h"

namespace minrnn::rl {

// Exit status of a command that stopped on a stop signal after writing its checkpoint: EX_TEMPFAIL
// from sysexits.h ("try again later"). Running the same command again resumes. Distinct from a
// failure (1) and from a death by the signal itself (128 + signal).
constexpr int kExitInterrupted = 75;

// The signals that ask for a stop.
inline constexpr std::array<int, 4> kStopSignals = {SIGTERM, SIGINT, SIGHUP, SIGPIPE};
// One of them: a sweep's child killed by it (before its handlers were in place, or an
// evaluation, which has none) was stopped, not failed; the next sweep takes it up again.
bool is_stop_signal(int signal);

// Installs handlers for kStopSignals that set a flag (a volatile sig_atomic_t) and do nothing
// else, and forgets any stop recorded before. For a command's whole life.
void install_stop_handlers();

// The same for a scope (a sweep run from a library call or a test): the previous actions of the
// signals come back at its end; the recorded stop stays readable after it.
class ScopedStopHandlers {
 public:
  ScopedStopHandlers();
  ~ScopedStopHandlers();
  ScopedStopHandlers(const ScopedStopHandlers&) = delete;
  ScopedStopHandlers& operator=(const ScopedStopHandlers&) = delete;

 private:
  struct sigaction* previous_;  // one per kStopSignals
};

bool stop_requested();
// The signal that asked for the stop (one of kStopSignals), 0 when none did.
int stop_signal();
// "SIGTERM", "SIGINT", "SIGHUP", "SIGPIPE" (for messages), "" when none.
std::string stop_signal_name();

// Thrown by work that a stop request cuts short rather than finishes (an evaluation's rollout,
// eval::RolloutOptions::should_stop, as a download's): what it computed is dropped, and redone by
// the resume.
using io::StopRequested;

// For tests: records a stop as if `signal` had arrived (0 clears it).
void request_stop_for_testing(int signal);

}  // namespace minrnn::rl
