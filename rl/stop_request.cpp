#include "rl/stop_request.h"

#include <csignal>

namespace minrnn::rl {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

void record_stop(int signal) {
  g_stop_signal = signal;  // nothing else here: the loops poll it between steps
}

void install(struct sigaction* previous) {
  g_stop_signal = 0;
  struct sigaction action = {};
  action.sa_handler = record_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a read or write in progress goes on; the loop checks after it
  for (size_t i = 0; i < kStopSignals.size(); ++i) {
    struct sigaction before = {};
    sigaction(kStopSignals[i], nullptr, &before);
    if (previous) previous[i] = before;
    // Ignored on purpose by whoever started us (`nohup` ignores SIGHUP; systemd and many
    // supervisors SIGPIPE, where a write to a restarted log must not end a run): it stays so.
    const bool kept_if_ignored = kStopSignals[i] == SIGHUP || kStopSignals[i] == SIGPIPE;
    if (kept_if_ignored && before.sa_handler == SIG_IGN) continue;
    sigaction(kStopSignals[i], &action, nullptr);
  }
}

}  // namespace

bool is_stop_signal(int signal) {
  for (int s : kStopSignals)
    if (s == signal) return true;
  return false;
}

void install_stop_handlers() {
  install(nullptr);
}

ScopedStopHandlers::ScopedStopHandlers() : previous_(new struct sigaction[kStopSignals.size()]) {
  install(previous_);
}

ScopedStopHandlers::~ScopedStopHandlers() {
  for (size_t i = 0; i < kStopSignals.size(); ++i)
    sigaction(kStopSignals[i], &previous_[i], nullptr);
  delete[] previous_;
}

bool stop_requested() {
  return g_stop_signal != 0;
}

int stop_signal() {
  return g_stop_signal;
}

std::string stop_signal_name() {
  switch (g_stop_signal) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
    case SIGPIPE:
      return "SIGPIPE";
    case 0:
      return "";
    default:
      return "signal " + std::to_string(int(g_stop_signal));
  }
}

void request_stop_for_testing(int signal) {
  g_stop_signal = signal;
}

}  // namespace minrnn::rl
