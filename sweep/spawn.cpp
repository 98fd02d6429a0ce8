#include "sweep/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "io/isolated.h"

namespace minrnn::sweep {

namespace fs = std::filesystem;

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

std::string find_on_path(const std::string& program) {
  if (program.find('/') != std::string::npos)
    return ::access(program.c_str(), X_OK) == 0 ? program : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate))
      return candidate.string();
  }
  return "";
}

namespace {

// Reads the child's two pipes into `r` until both close or `deadline` passes; false on the latter.
bool read_until_closed(int out_fd, int err_fd, CommandOutput& r,
                       std::chrono::steady_clock::time_point deadline) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[4096];
  bool in_time = true;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      in_time = false;
      break;
    }
    if (::poll(fds, 2, int(std::min<int64_t>(left.count(), 1000))) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, size_t(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  return in_time;
}

}  // namespace

CommandOutput run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  CommandOutput r;
  int out_pipe[2], err_pipe[2];
  if (::pipe(out_pipe) != 0) throw std::runtime_error("pipe failed");
  if (::pipe(err_pipe) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw std::runtime_error("pipe failed");
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    // Its own process group, so that a timeout kills what it started too (a wrapper's children
    // would otherwise hold the pipes open).
    ::setpgid(0, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    ::execvp(args[0], args.data());
    const std::string msg = argv[0] + ": " + std::strerror(errno) + "\n";
    if (::write(2, msg.data(), msg.size()) < 0) {
    }
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  r.timed_out = !read_until_closed(out_pipe[0], err_pipe[0], r, deadline);
  if (r.timed_out) ::kill(-pid, SIGKILL);
  const int status = io::wait_for_child(pid);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace minrnn::sweep
