// Reading an HDF5 file in a child process. The HDF5 library (1.10, Debian's) crashes on some
// corrupt files — a segfault inside H5Dopen decoding a broken datatype message, found by
// tests/fuzz — and no check of ours can run before its own parsing. So read_d4rl and read_minari
// fork, read in the child, and stream the result back through a pipe: a child that dies (any
// signal) becomes an error naming the file, and the caller's process is never at risk.
// Costs a fork and one copy of the data through the pipe (about 0.1 s per 100 MB).
//
// MINRNN_READ_IN_PROCESS=1 reads in the calling process instead (to debug the reader, or to let a
// sanitizer see HDF5's own crashes: scripts/fuzz.sh documents it).
#pragma once
#include <functional>
#include <string>

#include "datasets/d4rl.h"
#include "datasets/minari.h"

namespace minrnn::data::detail {

// Runs `read` (which fills `info` when not null) in a child process and returns what it read, or
// throws what it threw (std::invalid_argument or std::runtime_error, with its message), or throws
// std::runtime_error naming `path` when the child died.
Transitions read_isolated(const std::string& path, MinariInfo* info,
                          const std::function<Transitions(MinariInfo*)>& read);

}  // namespace minrnn::data::detail
