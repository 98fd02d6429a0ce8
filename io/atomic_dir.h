// Directories written whole or not at all, the directory twin of AtomicFile (io/atomic_file.h):
// a dataset folder is built beside its place and moved in by renames, so a reader never sees half
// of one and a failed or killed write keeps the previous one.
#pragma once
#include <filesystem>
#include <string>

namespace minrnn::io {

// Removes `path` and everything under it; quiet when it is not there. Not
// std::filesystem::remove_all: torch 2.11's libtorch.so exports its own copy of that symbol, which
// segfaults when it wins symbol resolution in a binary linked with LibTorch.
void remove_tree(const std::filesystem::path& path);

// The new contents of directory `dir`, built in staging() (<dir>.tmp) until commit() puts them in
// its place. A trailing slash in `dir` is ignored. commit() replaces an existing `dir` only once
// the new one is complete: the old one moves to <dir>.old, the new one in, the old one goes; if
// the second rename fails the old one is put back. A kill between the two renames leaves the old
// one at <dir>.old, and the next AtomicDir of that `dir` puts it back first. Destroyed without
// commit(), it removes the staging directory.
class AtomicDir {
 public:
  explicit AtomicDir(const std::string& dir);  // throws std::runtime_error naming the path
  ~AtomicDir();
  AtomicDir(const AtomicDir&) = delete;
  AtomicDir& operator=(const AtomicDir&) = delete;

  const std::filesystem::path& path() const { return dir_; }
  const std::filesystem::path& staging() const { return staging_; }
  void commit();  // throws std::runtime_error naming the path and the OS reason

 private:
  std::filesystem::path dir_, staging_, old_;
  bool committed_ = false;
};

}  // namespace minrnn::io
