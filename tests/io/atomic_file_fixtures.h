// What the write-failure tests of io/atomic_file.h share (atomic_file_test.cpp,
// atomic_update_test.cpp): a writer under a file size limit in a child, the error's words, the
// temps a write left.
#pragma once
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace minrnn::testing {

// Runs `body` in a child whose files may not grow past `limit` bytes. Returns the message of the
// exception it threw ("" when none); a child killed by a signal fails the test.
inline std::string run_limited(rlim_t limit, const std::function<void()>& body) {
  int pipe_fd[2];
  if (::pipe(pipe_fd) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fd[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit rl{limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    std::string message;
    try {
      body();
    } catch (const std::exception& e) {
      message = e.what();
      if (message.empty()) message = "(empty message)";
    }
    if (::write(pipe_fd[1], message.data(), message.size()) < 0) ::_exit(3);
    ::_exit(0);
  }
  ::close(pipe_fd[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fd[0], buf, sizeof buf)) > 0;) message.append(buf, n);
  ::close(pipe_fd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "child ended with status " << status << " (a signal: " << WIFSIGNALED(status) << ")";
  return message;
}

inline void expect_names(const std::string& message, const std::vector<std::string>& parts) {
  EXPECT_FALSE(message.empty()) << "no error";
  for (const auto& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "no '" << part << "' in: " << message;
}

// The temps in a folder: what a write leaves behind when it should not.
inline std::vector<std::string> temps_in(const std::string& folder) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator(folder))
    if (e.path().filename().string().find(".tmp") != std::string::npos)
      found.push_back(e.path().filename().string());
  return found;
}

}  // namespace minrnn::testing
