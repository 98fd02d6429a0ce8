#include "tools/bench/peer.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <regex>
#include <stdexcept>

#include "io/isolated.h"
#include "sweep/spawn.h"

namespace minrnn::cli {

double run_peer(const std::string& command, double seconds) {
  // The peer is a shell command line (PEER_PYTHON=python3 ../shared/peer/run.sh). Its first use
  // may make its venv (a pip install): minutes, not forever.
  const std::string line = command + " train " + std::to_string(seconds) + " 2>&1";
  const auto limit = std::chrono::seconds(static_cast<long>(seconds) + 1800);
  // Its lines are passed on as they come (review 52: that install showed nothing for minutes):
  // tee writes them to a duplicate of our stderr, which the shell inherits (dup's has no
  // close-on-exec; written through, not reopened, so a log file's offset is kept), and to the
  // pipe run_command reads the rate from (fd 3); pipefail keeps the peer's status.
  const int shown = ::dup(2);
  const std::string tee = shown < 0 ? "" : " | tee /dev/fd/3 3>&1 >&" + std::to_string(shown);
  const sweep::CommandOutput r = sweep::run_command(
      {"bash", "-c",
       "set -o pipefail; { " + command + " train " + std::to_string(seconds) + "; } 2>&1" + tee},
      limit);
  if (shown >= 0) ::close(shown);
  std::smatch m;
  static const std::regex rate("= ([0-9.]+) steps/s");
  if (r.exit_code != 0 || !std::regex_search(r.out, m, rate)) {
    const std::string ended =
        r.timed_out          ? "did not end within " + std::to_string(limit.count()) + " s (killed)"
        : r.exit_code == 127 ? "could not be started"
                             : io::wait_status_text(r.wait_status);
    throw std::runtime_error("--peer: '" + line + "' " + ended + " without '= X steps/s':\n" +
                             r.out + r.err);
  }
  if (shown < 0) std::fprintf(stderr, "%s", r.out.c_str());
  return std::stod(m[1].str());
}

}  // namespace minrnn::cli
