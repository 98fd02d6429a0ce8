#include "sweep/spawn.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace minrnn::sweep {

pid_t spawn(const std::string& exe, const std::vector<std::string>& args, const std::string& log,
            int threads) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) {
    throw std::runtime_error("cannot open log file " + log +
                             " to append to it: " + std::strerror(errno));
  }
  std::string line = "$ minrnn";
  for (const auto& a : args) line += " " + a;
  line += "\n";
  if (::write(fd, line.data(), line.size()) < 0) { /* the log is best effort */
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {  // child: only async-signal-safe calls until exec
    // A run never outlives its sweep unnoticed: when the sweep dies (any signal, SIGKILL too) the
    // kernel sends the child SIGTERM; the run resumes from its checkpoint on the next sweep.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(143);  // the sweep died before prctl took effect
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    const std::string t = std::to_string(threads);
    ::setenv("OMP_NUM_THREADS", t.c_str(), 1);
    ::setenv("MKL_NUM_THREADS", t.c_str(), 1);
    std::vector<char*> argv;
    static char name[] = "minrnn";
    argv.push_back(name);
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fd);
  return pid;
}

}  // namespace minrnn::sweep
