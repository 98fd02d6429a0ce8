// Running a parser we do not control (LibTorch's checkpoint reader) on a file we do not trust, in
// a child process first: its crash, or an allocation a hostile file asks for, ends the child, not
// the caller.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

namespace minrnn::io {

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
