// The exception of work a stop request (SIGTERM, Ctrl-C: rl/stop_request.h, or a caller's
// should_stop) cut short rather than finished: a download (what it kept is said in what()), a
// training's evaluation (dropped; the resume redoes it). One type, so a caller catches one.
#pragma once
#include <stdexcept>

namespace minrnn::io {

struct StopRequested : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace minrnn::io
