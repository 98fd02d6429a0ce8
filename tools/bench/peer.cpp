#include "tools/bench/peer.h"

#include <sys/wait.h>

#include <cstdio>
#include <regex>
#include <stdexcept>

namespace minrnn::cli {

double run_peer(const std::string& command, double seconds) {
  const std::string line = command + " train " + std::to_string(seconds) + " 2>&1";
  FILE* pipe = popen(line.c_str(), "r");
  if (!pipe) throw std::runtime_error("--peer: cannot run '" + line + "'");
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  const int status = pclose(pipe);
  std::smatch m;
  static const std::regex rate("= ([0-9.]+) steps/s");
  if (status != 0 || !std::regex_search(out, m, rate)) {
    // pclose returns a wait status: its exit code or signal, not the raw word (256 for exit 1).
    const std::string ended = status == -1        ? std::string("could not be waited for")
                              : WIFEXITED(status) ? "exited " + std::to_string(WEXITSTATUS(status))
                              : WIFSIGNALED(status)
                                  ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                  : "ended (wait status " + std::to_string(status) + ")";
    throw std::runtime_error("--peer: '" + line + "' " + ended + " without '= X steps/s':\n" + out);
  }
  std::fprintf(stderr, "%s", out.c_str());
  return std::stod(m[1].str());
}

}  // namespace minrnn::cli
