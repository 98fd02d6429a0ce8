#include "fetch/part_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "fetch/http.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"

namespace minrnn::fetch {

PartFile::PartFile(std::string path, std::string url)
    : path_(std::move(path)), url_(std::move(url)) {
  // Another download may remove an empty .part by name between our open and our lock (it holds
  // the lock while it does): the lock we got is then on a file without a name. Open again.
  for (int tries = 0;; ++tries) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw io::WriteError("cannot write " + path_ + ": " + std::strerror(errno) +
                           " (downloading " + url_ + ")");
    }
    // Without flock on its file system the .part is this download's unchecked, as a temp file is.
    int err = 0;
    const io::LockOutcome lock = io::try_lock(fd_, &err);
    if (lock == io::LockOutcome::kBusy || lock == io::LockOutcome::kFailed) {
      ::close(fd_);
      fd_ = -1;
      if (lock == io::LockOutcome::kFailed) {
        throw io::WriteError("cannot lock " + path_ + ": " + std::strerror(err) + " (downloading " +
                             url_ + ")");
      }
      throw FetchError(path_ + " is being written by another download of " + url_ +
                       "; wait for it to finish");
    }
    FileIdentity locked, named;
    if (identity_of(fd_, &locked) && identity_of(path_, &named) && locked == named) return;
    ::close(fd_);
    fd_ = -1;
    if (tries == 10) {
      throw FetchError(path_ + " keeps being removed while this download opens it (" + url_ +
                       "); another download is at work there");
    }
  }
}

PartFile::~PartFile() {
  if (fd_ < 0) return;
  if (size() == 0) ::unlink(path_.c_str());  // while still locked: see the constructor
  ::close(fd_);
}

int64_t PartFile::size() const {
  struct stat st {};
  return ::fstat(fd_, &st) == 0 ? int64_t(st.st_size) : 0;
}

void PartFile::truncate_to(int64_t bytes) {
  if (::ftruncate(fd_, off_t(bytes)) != 0 || ::lseek(fd_, off_t(bytes), SEEK_SET) < 0)
    fail_write(errno);
}

void PartFile::seek_end() {
  if (::lseek(fd_, 0, SEEK_END) < 0) fail_write(errno);
}

bool PartFile::write(const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd_, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return !(errno_ = errno);
    data += w, n -= size_t(w);
  }
  return true;
}

void PartFile::fail_write_now() {
  fail_write(errno_);
}

void PartFile::remove() {
  ::unlink(path_.c_str());
  ::close(std::exchange(fd_, -1));
}

FileIdentity PartFile::identity() const {
  FileIdentity id;
  identity_of(fd_, &id);
  return id;
}

void PartFile::close() {
  ::close(std::exchange(fd_, -1));
}

void PartFile::fail_write(int err) {
  throw io::WriteError("cannot write " + path_ + ": " + std::strerror(err) + " (downloading " +
                       url_ + "; what it holds is kept: the same command resumes there)");
}

}  // namespace minrnn::fetch
