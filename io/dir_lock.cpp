#include "io/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "io/writable.h"

namespace minrnn::io {

LockOutcome try_lock(int fd, int* error) {
  int err = 0;
  do {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return LockOutcome::kHeld;
    err = errno;
  } while (err == EINTR);
  if (error != nullptr) *error = err;
  if (err == EWOULDBLOCK) return LockOutcome::kBusy;
  return lock_unsupported(err) ? LockOutcome::kUnsupported : LockOutcome::kFailed;
}

bool lock_unsupported(int err) {
  return err == ENOLCK || err == ENOSYS || err == EINVAL || err == EOPNOTSUPP;
}

DirLock::DirLock(const std::string& dir, const std::string& what) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = (std::filesystem::path(dir) / ".lock").string();
  // O_CLOEXEC: child processes (a sweep's trainers) must not inherit, and so keep, the lock.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    // Why the folder is none to write in (a file stands on its path, /proc), where the lock file's
    // own error hid it (a walk, 2026-11-29: "cannot open the lock file (Not a directory)").
    const std::string err = std::strerror(errno);
    const std::string why = why_folder_unwritable(dir, /*make_folders=*/true);
    throw std::runtime_error(dir +
                             ": cannot write in it: " + (why.empty() ? path + ": " + err : why));
  }
  int err = 0;
  const LockOutcome lock = try_lock(fd_, &err);
  if (lock != LockOutcome::kHeld) {
    char holder[32] = {};
    const ssize_t n = ::pread(fd_, holder, sizeof(holder) - 1, 0);
    ::close(fd_);
    fd_ = -1;
    if (lock == LockOutcome::kUnsupported) {
      throw std::runtime_error(path + ": cannot lock: its file system has no flock (" +
                               std::strerror(err) + "; some NFS and Lustre mounts), and " + what +
                               " needs one to keep a second process out of " + dir +
                               ": use a folder on a local or flock-enabled file system");
    }
    if (lock == LockOutcome::kFailed) {
      throw std::runtime_error(path + ": cannot lock (" + std::strerror(err) + ")");
    }
    const std::string pid = n > 0 ? std::string(holder, static_cast<size_t>(n)) : "unknown";
    throw DirBusy(dir + " is in use by another process (pid " + pid + ", lock " + path +
                  "); wait for it to finish or stop it before running " + what + " here again");
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid only improves the message of a refused second process; the lock itself holds.
  }
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

long lock_holder(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / ".lock").string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  long holder = -1;
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    ::flock(fd, LOCK_UN);
  } else if (errno == EWOULDBLOCK) {
    char text[32] = {};
    const ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
    holder = n > 0 ? std::strtol(text, nullptr, 10) : 0;
  }
  ::close(fd);
  return holder;
}

std::string holder_text(long holder) {
  return holder > 0 ? "pid " + std::to_string(holder) : "pid unknown";
}

}  // namespace minrnn::io
