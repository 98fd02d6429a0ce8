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
  sigaction(SIGTERM, &action, previous ? &previous[0] : nullptr);
  sigaction(SIGINT, &action, previous ? &previous[1] : nullptr);
}

}  // namespace

void install_stop_handlers() {
  install(nullptr);
}

ScopedStopHandlers::ScopedStopHandlers() : previous_(new struct sigaction[2]) {
  install(previous_);
}

ScopedStopHandlers::~ScopedStopHandlers() {
  sigaction(SIGTERM, &previous_[0], nullptr);
  sigaction(SIGINT, &previous_[1], nullptr);
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
