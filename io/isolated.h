// Running a parser we do not control (LibTorch's checkpoint reader, the HDF5 library) on a file we
// do not trust, in a child process first: its crash, or an allocation a hostile file asks for,
// ends the child, not the caller.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>

namespace minrnn::io {

// A forked child that answers its parent through a pipe. `body` runs in the child with the pipe's
// write end; the child then leaves with _exit(0) (1 if `body` threw): no exit handlers, no
// buffers of the parent flushed twice. The parent reads read_fd() until it closes. However the
// parent leaves, the destructor closes the pipe and kills and reaps a child not waited for.
class ForkedChild {
 public:
  // Throws std::system_error "pipe failed: …" or "fork failed: …".
  explicit ForkedChild(const std::function<void(int write_fd)>& body);
  ~ForkedChild();
  ForkedChild(const ForkedChild&) = delete;
  ForkedChild& operator=(const ForkedChild&) = delete;

  pid_t pid() const { return pid_; }
  int read_fd() const { return read_fd_; }
  void kill();  // SIGKILL
  int wait();   // its wait status (waitpid's), reaped once

 private:
  pid_t pid_ = -1;
  int read_fd_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

// waitpid(pid) retried when a signal interrupts it: the child's wait status.
int wait_for_child(pid_t pid);

// A wait status as the shell's number: the exit status, or 128 + the signal that ended the child
// (137 for kill -9), as failed.json, a sweep's line and a script's `$?` say it.
int exit_code_of(int status);
// A wait status in words, to follow the child's name: "exited with status 3", "was killed by
// signal 11 (Segmentation fault)".
std::string wait_status_text(int status);

struct ProbeResult {
  bool ok = false;      // `probe` returned normally
  bool died = false;    // the child ended by a signal or without reporting
  std::string message;  // the exception's message (it threw), or how the child died
};

// Runs `probe` in a forked child whose address space may grow by at most `extra_memory` bytes
// (0: no limit; none under AddressSanitizer, which reserves terabytes of address space). The
// child leaves with _exit: no exit handlers, no buffers of the parent flushed twice. A child not
// done within `seconds` (> 0; 0: no limit) is killed: a fork copies the locks other threads held
// at that moment, and one the probe needs would never be released in the child.
ProbeResult probe_in_child(const std::function<void()>& probe, size_t extra_memory,
                           double seconds = 0);

// MINRNN_READ_IN_PROCESS=1: the readers that read a file in a child first (a dataset, a
// checkpoint) read it in the calling process, to debug a reader or to let a sanitizer see inside
// it; 0 or unset: in a child (anything else is refused, naming the variable).
bool read_in_process();

}  // namespace minrnn::io
