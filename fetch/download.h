// Downloading one file so that nothing half-written ever has its name:
//   - the bytes go to <path>.part, locked while written (two downloads never write one file);
//   - a .part left by a cut connection or a Ctrl-C is continued with `Range: bytes=<size>-` (a
//     server that ignores the Range is read again from the start);
//   - the size and checksum are checked before the .part is fsync'd and renamed to <path>; a
//     mismatch removes the .part and the error names the URL, the expected and the received;
//   - a file already at <path> is checked, not fetched again: its size every time, its sha256
//     once. The sha256 is recorded beside it, <path>.sha256 in sha256sum's format (`sha256sum -c`
//     rechecks it by hand), and trusted while the file keeps the modification time the record
//     carries as its own (a file replaced or touched since is hashed again).
//
//   fetch::download_file({url, "/data/hopper_medium-v2.hdf5", 152756557,
//                         {fetch::HashKind::kSha256, "5bdf..."}}, options);
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "fetch/checksum.h"
#include "fetch/http.h"
#include "fetch/progress.h"

namespace minrnn::fetch {

struct FileSpec {
  std::string url;
  std::string path;   // the final name
  int64_t size = -1;  // expected bytes (required)
  Checksum checksum;  // expected checksum (required)
  // A file at `path` that differs is replaced instead of refused: only for files the remote owns
  // and updates in place (Minari's namespace_metadata.json), never for data.
  bool replace_if_different = false;
};

struct DownloadOptions {
  HttpOptions http;
  ProgressOptions progress;
  int attempts = 3;          // transfers per file: a cut connection is resumed attempts - 1 times
  double retry_delay_s = 2;  // before the second attempt; doubles after each
};

struct DownloadResult {
  bool already_present = false;  // the file was there and checked: nothing fetched
  bool hashed_present = false;   // ... and its checksum computed now (there was no record yet)
  int64_t resumed_from = 0;      // bytes a .part held before this call
  int64_t bytes_received = 0;    // over the network in this call
  int requests = 0;
  double seconds = 0;
};

std::string part_path(const std::string& path);             // <path>.part
std::string checksum_record_path(const std::string& path);  // <path>.sha256

// A .part whose size and checksum are right, still locked, waiting for its final name.
class VerifiedPart {
 public:
  VerifiedPart(const FileSpec& spec, int fd);
  VerifiedPart(VerifiedPart&& other) noexcept;
  VerifiedPart& operator=(VerifiedPart&&) = delete;
  VerifiedPart(const VerifiedPart&) = delete;
  ~VerifiedPart();  // closing releases the lock; an uncommitted .part stays for the next run
  // fsync, rename to the final name, fsync the folder, record the sha256. Throws io::WriteError.
  void commit();

 private:
  FileSpec spec_;
  int fd_ = -1;
};

// The first half of download_file, for files that must appear in a given order (a Minari
// dataset's main_data.hdf5 last: readers take the folder for a dataset once that is there).
// Empty when the file is already present (result->already_present). Throws FetchError naming the
// URL (HTTP errors, a connection refused, a timeout, retries used up, a size or checksum
// mismatch), io::WriteError naming the .part (disk full: the .part is kept), StopRequested
// (should_stop: the .part is kept for the next run).
std::optional<VerifiedPart> fetch_part(const FileSpec& spec, const DownloadOptions& options,
                                       DownloadResult* result);

// fetch_part, then commit.
DownloadResult download_file(const FileSpec& spec, const DownloadOptions& options);

// Whether the file at spec.path is the one expected: its size, then its checksum (the recorded
// sha256 while the file is the one it was recorded for, else computed, and recorded). False when
// there is none. Throws FetchError naming the file and the URL when one is there that differs
// (unless replace_if_different: then it is removed and the answer is false).
bool present_and_verified(const FileSpec& spec, bool* hashed_now = nullptr);

}  // namespace minrnn::fetch
