// Every file minrnn writes goes through here, so that a full disk, a quota or a file size limit
// (ulimit -f) gives one kind of error and one outcome:
//   - the error names the file and the OS reason: "cannot write runs/a/checkpoint.pt: No space
//     left on device (the previous runs/a/checkpoint.pt is unchanged)";
//   - the previous version of the file is intact (the new one is written beside it, <path>.tmp,
//     checked at every write, fsync'd, and renamed over it only when complete);
//   - no <path>.tmp is left behind (a kill -9 mid-write can leave one; the next write of the same
//     file truncates it, and no reader looks at *.tmp);
//   - two writers of one file at once (two evals of a run ending together) each finish whole, the
//     later rename winning: each holds a lock (flock) on its temp, and a writer finding <path>.tmp
//     locked writes <path>.tmp.<pid>.<n> instead (removed, if a kill leaves it, by the next write).
// Appended logs (metrics.csv, evals.csv) use AppendFile: whole lines, each checked; a line that
// cannot be written is taken back, so the file keeps only complete rows.
#pragma once
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace minrnn::io {

// A write that failed: what() names the file and the OS reason (strerror).
class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The new contents of `path`, written to a temp beside it (tmp_path()) until commit() renames it
// over `path`. Destroyed without commit() (an exception, a failed write), it removes the temp.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // creates the temp; throws WriteError
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Writes all of it or throws WriteError.
  void write(const void* data, size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // For callbacks that must not throw (torch's archive writer): false when the write failed; the
  // first failure is kept and check() throws it. data == nullptr skips `size` bytes.
  bool try_write(const void* data, size_t size) noexcept;
  // Throws the WriteError of the first failed try_write, if any.
  void check();
  // fsync, close, rename over path(), fsync the folder. Throws WriteError (the temp is removed).
  void commit();

  const std::string& path() const { return path_; }
  const std::string& tmp_path() const { return tmp_; }

 private:
  [[noreturn]] void fail(const std::string& what, int err);
  std::string path_, tmp_;
  int fd_ = -1;
  int first_error_ = 0;  // errno of the first failed try_write
  bool committed_ = false;
};

// Writes `contents` to `path` atomically (an AtomicFile). Throws WriteError naming the file.
void write_file_atomically(const std::string& path, std::string_view contents);

// Rewrites `path` from what it holds now: update(current) returns the new contents, `current`
// null where the file does not exist. Two updaters of a file at once (two `bench --record`s of one
// log, two processes adding tuned products) take turns, neither losing the other's change: each
// holds a lock (flock) on the hidden file .<name>.lock beside it from its read to its rename, made
// on the first update and left there. Throws WriteError naming the file (why_unwritable's reason
// first; std::runtime_error where it exists and cannot be read).
void update_file_atomically(const std::string& path,
                            const std::function<std::string(const std::string* current)>& update);

// For writers that only take a path (a file copy): save(tmp_path) writes the new contents and
// throws on failure; the result is then fsync'd and renamed over `path`. A throwing save leaves
// `path` untouched and the temp removed. `save` must not lock the file (HDF5 does: build its file
// in memory, as datasets/d4rl_write.cpp does).
template <typename Save>
void replace_file_atomically(const std::string& path, Save&& save);

// The last step of a write to a temp of the caller's own (a download's .part): fsyncs tmp, renames
// it over path and fsyncs the folder; removes tmp and throws WriteError on failure.
void commit_file(const std::string& tmp, const std::string& path);

void remove_file_quietly(const std::string& path);

// "cannot write <path>: <strerror(err)> (the previous <path> is unchanged)" and the like: the one
// wording of write failures, for writers with their own I/O (HDF5).
std::string write_failure(const std::string& path, const std::string& reason);

// A log that grows by whole lines (metrics.csv, evals.csv): opened for appending (created if
// absent), every write checked. A line that cannot be written in full is cut off again, so the
// file holds whole lines only, and append() throws WriteError naming the file and the reason.
class AppendFile {
 public:
  explicit AppendFile(std::string path);  // throws WriteError
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;
  void append(std::string_view lines);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// The complete lines of a file AppendFile writes (metrics.csv, evals.csv), without their newlines:
// a torn last line (the writer was killed mid-line) is not one. Empty when the file is missing;
// throws as read_input_file where it is no regular file (a FIFO would block) or over 1 GiB.
std::vector<std::string> read_complete_lines(const std::string& path);

// Appends to `path` (see AppendFile) in one call.
void append_to_file(const std::string& path, std::string_view lines);

template <typename Save>
void replace_file_atomically(const std::string& path, Save&& save) {
  AtomicFile out(path);
  save(out.tmp_path());
  out.commit();
}

}  // namespace minrnn::io
