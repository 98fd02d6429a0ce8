#include "io/isolated.h"

#include "io/env_switch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>

namespace minrnn::io {
namespace {

// The child's current address space size (VmSize), in bytes; 0 when unknown.
size_t address_space_bytes() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  size_t kb = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "VmSize: %zu kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb * 1024;
}

// The child's side: the probe run under the memory limit, its outcome written to `fd` (a status
// byte, 0 for success, then the message), then an exit that runs no destructor of the parent's.
[[noreturn]] void probe_and_reply(const std::function<void()>& probe, size_t extra_memory, int fd) {
#ifndef __SANITIZE_ADDRESS__
  if (extra_memory > 0) {
    if (const size_t now = address_space_bytes()) {
      const rlimit limit{now + extra_memory, now + extra_memory};
      ::setrlimit(RLIMIT_AS, &limit);
    }
  }
#endif
  std::string message;
  char status = 0;
  try {
    probe();
  } catch (const std::exception& e) {
    status = 1;
    message = e.what();
  } catch (...) {
    status = 1;
    message = "an unknown exception";
  }
  std::string reply = status + message;
  for (size_t done = 0; done < reply.size();) {
    const ssize_t n = ::write(fd, reply.data() + done, reply.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::_exit(0);
}

// All the child wrote to `fd` before it closed (the reply; empty if it died first); false when
// `seconds` (> 0) passed first.
bool read_all(int fd, double seconds, std::string* reply) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  char buf[4096];
  for (;;) {
    if (seconds > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
      if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
    }
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return true;
    }
    reply->append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

ProbeResult probe_in_child(const std::function<void()>& probe, size_t extra_memory,
                           double seconds) {
  ProbeResult result;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.message = std::string("pipe failed: ") + std::strerror(errno);
    return result;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.message = std::string("fork failed: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return result;
  }
  if (pid == 0) {
    ::close(fds[0]);
    probe_and_reply(probe, extra_memory, fds[1]);
  }
  ::close(fds[1]);
  std::string reply;
  const bool in_time = read_all(fds[0], seconds, &reply);
  ::close(fds[0]);
  if (!in_time) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!in_time) {
    result.died = true;
    char text[96];
    std::snprintf(text, sizeof text, "did not finish within %g s (stopped)", seconds);
    result.message = text;
  } else if (WIFSIGNALED(status)) {
    result.died = true;
    result.message = std::string("crashed (") + strsignal(WTERMSIG(status)) + ")";
  } else if (reply.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    result.died = true;
    result.message = "ended without a result";
  } else {
    result.ok = reply[0] == 0;
    result.message = reply.substr(1);
  }
  return result;
}

bool read_in_process() {
  return env_switch("MINRNN_READ_IN_PROCESS", false, "0", "1",
                    "1 (read a file in this process) or 0 (in a child first)");
}

}  // namespace minrnn::io
