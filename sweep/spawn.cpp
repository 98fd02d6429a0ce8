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

extern char** environ;  // POSIX: the program declares it

namespace minrnn::sweep {

namespace fs = std::filesystem;

namespace {

// `text` and errno's number, "…: errno 2\n", into `line` with no allocation: what a child may
// write after a failed exec (snprintf and strerror are not async-signal-safe).
size_t exec_failure_line(const std::string& text, int err, char (&line)[512]) {
  size_t n = std::min(text.size(), sizeof line - 16);
  std::memcpy(line, text.data(), n);
  const char tag[] = " (errno ";
  std::memcpy(line + n, tag, sizeof tag - 1);
  n += sizeof tag - 1;
  char digits[8];
  int d = 0;
  do {
    digits[d++] = static_cast<char>('0' + err % 10);
    err /= 10;
  } while (err > 0 && d < 7);
  while (d > 0) line[n++] = digits[--d];
  line[n++] = ')';
  line[n++] = '\n';
  return n;
}

// The environment a run starts with: this process's, its thread counts set to `threads` (as
// NAME=VALUE strings, made before the fork: the child may not allocate).
std::vector<std::string> run_environment(int threads) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("OMP_NUM_THREADS=", 0) != 0 && entry.rfind("MKL_NUM_THREADS=", 0) != 0)
      env.push_back(entry);
  }
  env.push_back("OMP_NUM_THREADS=" + std::to_string(threads));
  env.push_back("MKL_NUM_THREADS=" + std::to_string(threads));
  return env;
}

// Pointers into `words`, null-terminated, as exec takes them.
std::vector<char*> exec_list(const std::vector<std::string>& words) {
  std::vector<char*> list;
  for (const auto& w : words) list.push_back(const_cast<char*>(w.c_str()));
  list.push_back(nullptr);
  return list;
}

}  // namespace

pid_t spawn(const std::string& exe, const std::vector<std::string>& args, const std::string& log,
            int threads) {
  // Close-on-exec: the other runs this sweep starts do not hold this one's log open (the child's
  // own copies, dup2'd to 1 and 2, stay open across its exec).
  int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw std::runtime_error("cannot open log file " + log +
                             " to append to it: " + std::strerror(errno));
  }
  if (fd <= 2) {  // this process started with 1 or 2 closed: dup2(fd, fd) would keep close-on-exec
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    ::close(fd);
    if (moved < 0)
      throw std::runtime_error("cannot open log file " + log + ": " + std::strerror(errno));
    fd = moved;
  }
  std::string line = "$ minrnn";
  for (const auto& a : args) line += " " + a;
  line += "\n";
  if (::write(fd, line.data(), line.size()) < 0) { /* the log is best effort */
  }
  // Everything the child needs is made here: after a fork of a process with threads, only
  // async-signal-safe calls are safe in the child (a malloc another thread held the lock of
  // would wait forever).
  std::vector<std::string> words = {"minrnn"};
  words.insert(words.end(), args.begin(), args.end());
  const std::vector<std::string> env = run_environment(threads);
  const std::vector<char*> argv = exec_list(words), envp = exec_list(env);
  const std::string cannot_run = exe + ": cannot run it";
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // A run never outlives its sweep unnoticed: when the sweep dies (any signal, SIGKILL too) the
    // kernel sends the child SIGTERM; the run resumes from its checkpoint on the next sweep.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(143);  // the sweep died before prctl took effect
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execve(exe.c_str(), argv.data(), envp.data());
    char line[512];
    if (::write(2, line, exec_failure_line(cannot_run, errno, line)) < 0) {
    }
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
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw std::runtime_error("pipe failed");
  }
  // Made before the fork, as spawn's: the child calls only async-signal-safe functions (execvp,
  // which searches PATH, is not one: the program is found here).
  const std::vector<char*> args = exec_list(argv);
  const std::string program = find_on_path(argv[0]);
  const std::string cannot_run = argv[0] + (program.empty() ? ": not found" : ": cannot run it");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int p : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(p);
    throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Its own process group, so that a timeout kills what it started too (a wrapper's children
    // would otherwise hold the pipes open).
    ::setpgid(0, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    if (!program.empty()) ::execv(program.c_str(), args.data());
    char line[512];
    if (::write(2, line, exec_failure_line(cannot_run, program.empty() ? ENOENT : errno, line)) <
        0) {
    }
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  r.timed_out = !read_until_closed(out_pipe[0], err_pipe[0], r, deadline);
  if (r.timed_out) ::kill(-pid, SIGKILL);
  const int status = io::wait_for_child(pid);
  r.wait_status = status;
  r.exit_code = io::exit_code_of(status);
  return r;
}

}  // namespace minrnn::sweep
