// Starting the child processes of a local sweep (sweep/local_pool.cpp).
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace minrnn::sweep {

// Starts `exe args...` with stdout and stderr appended to `log` (after a "$ minrnn ..." line) and
// OMP/MKL limited to `threads`. The child gets SIGTERM when the sweep dies, by any signal.
pid_t spawn(const std::string& exe, const std::vector<std::string>& args, const std::string& log,
            int threads);

}  // namespace minrnn::sweep
