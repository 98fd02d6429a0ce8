// A download's <path>.part: open and locked while one download writes it (flock: released by the
// kernel however the process ends), so two downloads never write one file. The lock is taken on
// the file the name holds: a .part removed by name (an empty one, by the download that made it)
// while another process was opening it is opened again rather than written unseen.
#pragma once
#include <sys/types.h>

#include <ctime>

#include <cstdint>
#include <string>

namespace minrnn::fetch {

// Which file a name held when it was checked: the same device and inode, and (an inode number is
// reused as soon as a file is removed) the same last change of its status.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  timespec changed{};  // st_ctim: set by every write, and by a rename
  bool same_inode(const FileIdentity& o) const { return device == o.device && inode == o.inode; }
  bool operator==(const FileIdentity& o) const {
    return same_inode(o) && changed.tv_sec == o.changed.tv_sec &&
           changed.tv_nsec == o.changed.tv_nsec;
  }
};

class PartFile {
 public:
  // Opens (creating it) and locks `path`; `url` names the download in errors. Throws FetchError
  // when another download holds it, io::WriteError when it cannot be opened.
  PartFile(std::string path, std::string url);
  // A .part that holds no byte (a 404, a refused connection) is not left behind.
  ~PartFile();
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  int64_t size() const;
  // Keeps the first `bytes` (what was there before an answer that proved not to be the file), and
  // writes on from there.
  void truncate_to(int64_t bytes);
  void seek_end();
  // False on failure; the reason is kept for fail_write_now().
  bool write(const char* data, size_t n);
  [[noreturn]] void fail_write_now();
  void remove();
  // Which file it is, for a commit to find it again after close().
  FileIdentity identity() const;
  void close();  // releases the lock

  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail_write(int err);
  std::string path_, url_;
  int fd_ = -1;
  int errno_ = 0;
};

// The identity of the file at `path`, or of the open `fd`; false when there is none.
bool identity_of(const std::string& path, FileIdentity* id);
bool identity_of(int fd, FileIdentity* id);

}  // namespace minrnn::fetch
