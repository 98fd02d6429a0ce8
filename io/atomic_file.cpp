#include "io/atomic_file.h"

#include <sstream>

#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  sync_fd(fd);
  ::close(fd);
}

}  // namespace

std::string write_failure(const std::string& path, const std::string& reason) {
  std::string msg = "cannot write " + path + ": " + reason;
  if (exists(path)) msg += " (the previous " + path + " is unchanged)";
  return msg;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {
  do {
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) {
    const int err = errno;
    throw WriteError(
        write_failure(path_, std::string("cannot create ") + tmp_ + ": " + std::strerror(err)));
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) remove_file_quietly(tmp_);
}

void AtomicFile::fail(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  remove_file_quietly(tmp_);
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
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && errno != EINTR) fail("", errno);
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    fail("cannot rename " + tmp_ + " over it", errno);
  }
  committed_ = true;
  sync_parent(path_);
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  AtomicFile out(path);
  out.write(contents);
  out.commit();
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
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<std::string> lines;
  for (size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
    lines.push_back(text.substr(at, end - at));
  return lines;
}

}  // namespace minrnn::io
