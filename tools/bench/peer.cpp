#include "tools/bench/peer.h"

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
  const int rc = pclose(pipe);
  std::smatch m;
  static const std::regex rate("= ([0-9.]+) steps/s");
  if (rc != 0 || !std::regex_search(out, m, rate)) {
    throw std::runtime_error("--peer: '" + line + "' exited " + std::to_string(rc) +
                             " without '= X steps/s':\n" + out);
  }
  std::fprintf(stderr, "%s", out.c_str());
  return std::stod(m[1].str());
}

}  // namespace minrnn::cli
