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
#include <system_error>

namespace minrnn::io {
namespace {

// The child's current address space size (VmSize), in bytes; 0 when unknown.
[[maybe_unused]] size_t address_space_bytes() {
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
// byte, 0 for success, then the message).
void probe_and_reply(const std::function<void()>& probe, [[maybe_unused]] size_t extra_memory,
                     int fd) {
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

ForkedChild::ForkedChild(const std::function<void(int write_fd)>& body) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe failed");
  pid_ = ::fork();
  if (pid_ < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::system_error(err, std::generic_category(), "fork failed");
  }
  if (pid_ == 0) {
    ::close(fds[0]);
    int code = 0;
    try {
      body(fds[1]);
    } catch (...) {
      code = 1;
    }
    ::_exit(code);
  }
  ::close(fds[1]);
  read_fd_ = fds[0];
}

ForkedChild::~ForkedChild() {
  ::close(read_fd_);
  if (!reaped_) {
    kill();
    wait();
  }
}

void ForkedChild::kill() {
  if (!reaped_) ::kill(pid_, SIGKILL);
}

int ForkedChild::wait() {
  if (!reaped_) {
    status_ = wait_for_child(pid_);
    reaped_ = true;
  }
  return status_;
}

int wait_for_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;  // stopped or continued: waitpid reports neither without WUNTRACED/WCONTINUED
}

std::string wait_status_text(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return "was killed by signal " + std::to_string(sig) +
           (name ? std::string(" (") + name + ")" : "");
  }
  return "ended with wait status " + std::to_string(status);
}

ProbeResult probe_in_child(const std::function<void()>& probe, size_t extra_memory,
                           double seconds) {
  ProbeResult result;
  try {
    ForkedChild child([&](int fd) { probe_and_reply(probe, extra_memory, fd); });
    std::string reply;
    const bool in_time = read_all(child.read_fd(), seconds, &reply);
    if (!in_time) child.kill();
    const int status = child.wait();
    if (!in_time) {
      result.died = true;
      char text[96];
      std::snprintf(text, sizeof text, "did not finish within %g s (stopped)", seconds);
      result.message = text;
    } else if (reply.empty() || status != 0) {
      result.died = true;
      result.message = status == 0 ? "ended without a result" : wait_status_text(status);
    } else {
      result.ok = reply[0] == 0;
      result.message = reply.substr(1);
    }
  } catch (const std::system_error& e) {  // no pipe or no fork: the probe never ran
    result.message = e.what();
  }
  return result;
}

bool read_in_process() {
  return env_switch("MINRNN_READ_IN_PROCESS", false, "0", "1",
                    "1 (read a file in this process) or 0 (in a child first)");
}

}  // namespace minrnn::io
