// One process at a time in a working directory (a training run, a sweep, a SAC work dir): two
// writers there would overwrite each other's checkpoints and results.
//
//   io::DirLock lock(run_dir, "minrnn train");   // throws if another process holds run_dir
//
// An exclusive flock on <dir>/.lock, held while the object lives. The kernel releases it when the
// process ends, however it ends, so a killed run never leaves a stale lock in the way of its
// resume.
#pragma once
#include <stdexcept>
#include <string>

namespace minrnn::io {

// What DirLock throws when another process holds the dir.
class DirBusy : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The exit status of a command a DirLock refused (sysexits' EX_CANTCREAT), so that a sweep tells
// "another process has this run" from a failure even when that process ends before it looks.
constexpr int kExitDirBusy = 73;

class DirLock {
 public:
  // Creates `dir` if needed. Throws DirBusy naming the dir, the holder's pid and `what` when
  // another process holds it (std::runtime_error when the lock file cannot be used at all).
  DirLock(const std::string& dir, const std::string& what);
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

// An exclusive flock taken without waiting, and what stopped it: another holder, a file system
// without flock (some NFS and Lustre mounts: ENOLCK, ENOSYS, EINVAL, EOPNOTSUPP), or another error
// (`error` its errno). Each caller decides what an unsupported lock means for it: a run dir
// refuses (two trainers would overwrite each other), a temp file or a download's .part carries
// on as before locks.
enum class LockOutcome { kHeld, kBusy, kUnsupported, kFailed };
LockOutcome try_lock(int fd, int* error = nullptr);
// Whether flock's errno `err` says the file system has no flock (try_lock's kUnsupported).
bool lock_unsupported(int err);

// The pid written by the process that holds <dir>/.lock now (0 when the pid is unreadable), or -1
// when nobody holds it (or there is no lock file). Probes with a non-blocking flock released at
// once, so it never keeps a lock.
long lock_holder(const std::string& dir);
// lock_holder's answer for a message: "pid 123", or "pid unknown" for 0.
std::string holder_text(long holder);

}  // namespace minrnn::io
