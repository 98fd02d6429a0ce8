#include "io/atomic_file.h"


#include <filesystem>
#include <iterator>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "io/dir_lock.h"
#include "io/file_identity.h"
#include "io/input_file.h"
#include "io/writable.h"

namespace minrnn::io {
namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Writes all `size` bytes at the fd's position; errno on failure (0 for a write that made no
// progress without one).
int write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

// fsync, where the file system supports it (EINVAL: it cannot sync this kind of file).
int sync_fd(int fd) {
  while (::fsync(fd) != 0) {
    if (errno == EINTR) continue;
    return errno == EINVAL || errno == EROFS ? 0 : errno;
  }
  return 0;
}

// The rename into place is durable once the folder's entry is: best effort (a failure here does
// not undo the rename, and some file systems refuse to sync folders).
void sync_parent(const std::string& path) {
  const int fd = ::open(folder_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  sync_fd(fd);
  ::close(fd);
}

// True when the open `fd` is still the file named `name` (not renamed away or removed since).
bool still_named(int fd, const std::string& name) {
  FileIdentity by_fd, by_name;
  return identity_of(fd, &by_fd) && identity_of(name, &by_name) && by_fd.same_inode(by_name);
}

// Opens, locks (flock, exclusive) and empties the temp `name`; -1 with `err` set when it cannot:
// EWOULDBLOCK while another writer holds it, EEXIST for a `fresh` name that exists, EAGAIN when
// the name moved before the lock was taken. Every writer holds its temp's lock until the temp is
// renamed or removed, so two writers of one file never share a temp, and a temp whose lock can be
// taken is a leftover (a kill -9 mid-write) that the next writer empties or removes.
int take_temp(const std::string& name, bool fresh, int& err) {
  int fd;
  do {
    fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (fresh ? O_EXCL : 0), 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    err = errno;
    return -1;
  }
  err = 0;
  // Where a file system has no flock (some NFS and Lustre mounts) the temp is the writer's
  // without the check, as before locks.
  const LockOutcome lock = try_lock(fd, &err);
  if (lock == LockOutcome::kUnsupported) {
    err = 0;
  } else if (lock == LockOutcome::kHeld && !still_named(fd, name)) {
    err = EAGAIN;
  }
  while (err == 0 && ::ftruncate(fd, 0) != 0) {
    if (errno != EINTR) err = errno;
  }
  if (err != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Removes the <path>.tmp.<pid>.<n> temps that no writer holds: those of writers killed while
// another wrote the same file (the plain <path>.tmp is emptied and reused by the next writer).
// Our own process's are skipped: on NFS flock is a per-process lock, which a second open of the
// same process takes even while one of our threads writes there.
void remove_abandoned_temps(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string prefix = path.substr(slash == std::string::npos ? 0 : slash + 1) + ".tmp.";
  const std::string ours = prefix + std::to_string(::getpid()) + ".";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = ::readdir(d)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) != 0 ||
        std::strncmp(e->d_name, ours.c_str(), ours.size()) == 0)
      continue;
    const std::string name = (slash == std::string::npos ? "" : dir) + e->d_name;
    const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    if (try_lock(fd) == LockOutcome::kHeld && still_named(fd, name)) ::unlink(name.c_str());
    ::close(fd);
  }
  ::closedir(d);
}

}  // namespace

std::string write_failure(const std::string& path, const std::string& reason) {
  std::string msg = "cannot write " + path + ": " + reason;
  if (exists(path)) msg += " (the previous " + path + " is unchanged)";
  return msg;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  int err = 0;
  // Again (a few times at most) when a temp was renamed or removed by its holder between our open
  // and our lock.
  for (int attempt = 0; attempt < 3 && fd_ < 0; ++attempt) {
    tmp_ = path_ + ".tmp";
    fd_ = take_temp(tmp_, false, err);
    for (int n = 0; fd_ < 0 && err == EWOULDBLOCK && n < 1000; ++n) {
      tmp_ = path_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(n);
      fd_ = take_temp(tmp_, true, err);
      if (fd_ < 0 && err == EEXIST) err = EWOULDBLOCK;
    }
    if (err != 0 && err != EAGAIN && err != EWOULDBLOCK) break;
  }
  if (fd_ < 0) {
    // The target's own trouble (a missing or read-only folder, a folder by its name) in its words;
    // the temp's name only where the folder itself would take the file.
    const std::string why = why_unwritable(path_, /*make_folders=*/false);
    throw WriteError(write_failure(
        path_,
        !why.empty() ? why : std::string("cannot create ") + tmp_ + ": " + std::strerror(err)));
  }
  remove_abandoned_temps(path_);
}

AtomicFile::~AtomicFile() {
  // Removed before its lock goes: a temp that can be locked is one nobody writes.
  if (!committed_) remove_file_quietly(tmp_);
  if (fd_ >= 0) ::close(fd_);
}

void AtomicFile::fail(const std::string& what, int err) {
  remove_file_quietly(tmp_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  committed_ = true;  // nothing left to clean up
  throw WriteError(
      write_failure(path_, what.empty() ? std::strerror(err) : what + ": " + std::strerror(err)));
}

void AtomicFile::write(const void* data, size_t size) {
  if (!try_write(data, size)) check();
}

bool AtomicFile::try_write(const void* data, size_t size) noexcept {
  if (first_error_ != 0) return false;
  if (fd_ < 0) {
    first_error_ = EBADF;
    return false;
  }
  int err = 0;
  if (data == nullptr) {
    if (::lseek(fd_, static_cast<off_t>(size), SEEK_CUR) < 0) err = errno;
  } else {
    err = write_all(fd_, data, size);
  }
  if (err != 0) first_error_ = err;
  return err == 0;
}

void AtomicFile::check() {
  if (first_error_ != 0) fail("", first_error_);
}

void AtomicFile::commit() {
  check();
  if (fd_ < 0) throw WriteError(write_failure(path_, "written already"));
  if (const int err = sync_fd(fd_)) fail("", err);
  // Renamed while still locked, then closed: see take_temp.
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    fail("cannot rename " + tmp_ + " over it", errno);
  }
  committed_ = true;
  // The data were fsync'd before the rename: nothing close could still report is lost.
  ::close(fd_);
  fd_ = -1;
  sync_parent(path_);
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  AtomicFile out(path);
  out.write(contents);
  out.commit();
}

namespace {

// The lock of an update of `path`: an exclusive flock, waited for, on the hidden file
// .<name>.lock beside it, opened read-write (NFS emulates flock with POSIX locks, which lock
// exclusively only a descriptor open for writing: a folder's cannot be). A file of its own, not
// `path` itself, which every update replaces by a rename, nor `path`'s folder; never removed, as
// a waiter may hold it open. Made 0666 less the umask, so the users who may write the file may
// lock it; one who may only read the lock locks it read-only (enough for a local flock). -1
// where the file system takes no such lock: the update goes on unlocked, as a write without it
// would.
int lock_for_update(const std::string& path) {
  const size_t name_at = path.rfind('/') + 1;  // 0 for a bare name (npos + 1)
  const std::string lock = path.substr(0, name_at) + "." + path.substr(name_at) + ".lock";
  int fd;
  do {
    fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0 && errno == EACCES) fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw WriteError(
        write_failure(path, "cannot open its lock " + lock + ": " + std::strerror(errno)));
  }
  int err;
  do {
    err = ::flock(fd, LOCK_EX) == 0 ? 0 : errno;
  } while (err == EINTR);
  if (err == 0) return fd;
  ::close(fd);
  if (lock_unsupported(err) || err == EBADF) return -1;  // EBADF: NFS, a read-only lock
  throw WriteError(write_failure(path, "cannot lock " + lock + ": " + std::strerror(err)));
}

// The file's contents, or false where it does not exist (only then: a file that cannot be read
// is an error, not an empty log to start again). Read as every file a user hands us (a FIFO
// refused), up to 1 GiB.
bool read_whole(const std::string& path, std::string& contents) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  }
  contents = read_input_file(path, "file", uintmax_t{1} << 30);
  return true;
}

}  // namespace

void update_file_atomically(const std::string& path,
                            const std::function<std::string(const std::string* current)>& update) {
  // A folder, or a folder that is missing or takes no file: said as such, before a lock is made.
  if (const std::string why = why_unwritable(path, /*make_folders=*/false); !why.empty())
    throw WriteError(write_failure(path, why));
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0) ::close(fd);  // releases the lock
    }
  } lock{lock_for_update(path)};
  std::string current;
  const bool there = read_whole(path, current);
  write_file_atomically(path, update(there ? &current : nullptr));
}

void commit_file(const std::string& tmp, const std::string& path) {
  // Plain C calls rather than std::filesystem: torch-linked binaries carry a second copy of the
  // std::filesystem symbols (see tests/temp_dir.h).
  const int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
  int err = fd < 0 ? errno : sync_fd(fd);
  if (fd >= 0) ::close(fd);
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    remove_file_quietly(tmp);
    throw WriteError(
        write_failure(path, std::string(std::strerror(err)) + " (finishing " + tmp + ")"));
  }
  sync_parent(path);
}

void remove_file_quietly(const std::string& path) {
  std::remove(path.c_str());
}

AppendFile::AppendFile(std::string path) : path_(std::move(path)) {
  do {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) {
    const int err = errno;
    throw WriteError("cannot open " + path_ + " to append to it: " + std::strerror(err));
  }
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendFile::append(std::string_view lines) {
  struct stat st;
  const bool sized = ::fstat(fd_, &st) == 0;
  const int err = write_all(fd_, lines.data(), lines.size());
  if (err == 0) return;
  // Take back a partly written line: readers and resume see whole rows only.
  if (sized) {
    while (::ftruncate(fd_, st.st_size) != 0 && errno == EINTR) {
    }
  }
  throw WriteError("cannot append to " + path_ + ": " + std::strerror(err) +
                   " (what it held before is unchanged)");
}

void append_to_file(const std::string& path, std::string_view lines) {
  AppendFile(path).append(lines);
}

std::vector<std::string> read_complete_lines(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  // A run's CSV outgrows a config's cap: 1M steps logged each step are ~60 MB.
  const std::string text = read_input_file(path, "file of rows", uintmax_t{1} << 30);
  std::vector<std::string> lines;
  for (size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
    lines.push_back(text.substr(at, end - at));
  return lines;
}

}  // namespace minrnn::io
