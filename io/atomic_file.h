// Replacing a file so that no reader, and no crash, ever sees half of it: write beside the target
// (<path>.tmp), then rename over it (atomic on POSIX within one file system).
#pragma once
#include <string>

namespace minrnn::io {

// Writes `contents` to `path` atomically. Throws std::runtime_error naming the file on failure;
// the previous file, if any, is then untouched.
void write_file_atomically(const std::string& path, const std::string& contents);

// For writers that only take a path (torch archives, HDF5): save(tmp_path) writes the new
// contents, then it replaces `path`. A throwing save leaves `path` untouched and removes tmp.
template <typename Save>
void replace_file_atomically(const std::string& path, Save&& save);

// The rename step on its own: moves tmp over path, or throws naming both.
void commit_file(const std::string& tmp, const std::string& path);

void remove_file_quietly(const std::string& path);

template <typename Save>
void replace_file_atomically(const std::string& path, Save&& save) {
  const std::string tmp = path + ".tmp";
  try {
    save(tmp);
  } catch (...) {
    remove_file_quietly(tmp);
    throw;
  }
  commit_file(tmp, path);
}

}  // namespace minrnn::io
