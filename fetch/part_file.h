// A download's <path>.part: open and locked while one download writes it (flock: released by the
// kernel however the process ends), so two downloads never write one file. The lock is taken on
// the file the name holds: a .part removed by name (an empty one, by the download that made it)
// while another process was opening it is opened again rather than written unseen.
#pragma once
#include <cstdint>
#include <string>

#include "io/file_identity.h"

namespace minrnn::fetch {

using io::FileIdentity;

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

using io::identity_of;

}  // namespace minrnn::fetch
