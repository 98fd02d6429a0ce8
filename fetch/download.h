// Downloading one file so that nothing half-written ever has its name:
//   - the bytes go to <path>.part, locked while written (two downloads never write one file);
//   - a .part left by a cut connection or a Ctrl-C is continued with `Range: bytes=<size>-` (a
//     server that ignores the Range sends the file from its start: the bytes the .part has are
//     skipped); a cut answer is tried again (a try that brought bytes starts the count afresh);
//   - an answer that is not the file (another size, an HTML page, a 204) is an error that keeps
//     what the .part had before it: only bytes shown wrong by the checksum are thrown away, and a
//     resumed download whose checksum is wrong is fetched once more from byte 0 first (the .part
//     may be of a version the server has since replaced);
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
#include "fetch/part_file.h"
#include "fetch/progress.h"

namespace minrnn::fetch {

struct FileSpec {
  std::string url;
  std::string path;   // the final name
  int64_t size = -1;  // expected bytes (required)
  Checksum checksum;  // expected checksum (required)
  // A file at `path` that differs is replaced (by the rename of the verified new one) instead of
  // refused: only for files the remote owns and updates in place (Minari's
  // namespace_metadata.json), never for data.
  bool replace_if_different = false;
};

struct DownloadOptions {
  HttpOptions http;
  ProgressOptions progress;
  // Tries in a row that bring no byte, per file: a cut connection is resumed attempts - 1 times
  // after the last try that brought bytes.
  int attempts = 3;
  double retry_delay_s = 2;        // before the second try; doubles after each
  double max_retry_after_s = 300;  // a server's Retry-After is waited for, up to this
};

struct DownloadResult {
  bool already_present = false;  // the file was there and checked: nothing fetched
  bool hashed_present = false;   // ... and its checksum computed now (there was no record yet)
  int64_t resumed_from = 0;      // bytes a .part held before this call
  int64_t bytes_received = 0;    // over the network in this call
  int requests = 0;
  double seconds = 0;
};

std::string checksum_record_path(const std::string& path);  // <path>.sha256

// A .part whose size and checksum are right, waiting for its final name. It holds no open file
// (a dataset of more files than the process may open waits in as many of these): the commit locks
// the .part again and renames it only if it is still the file that was checked. One not committed
// stays for the next run, which checks it again.
class VerifiedPart {
 public:
  VerifiedPart(const FileSpec& spec, FileIdentity checked) : spec_(spec), checked_(checked) {}
  // fsync, rename to the final name, fsync the folder, record the sha256. Throws io::WriteError,
  // FetchError when the .part is locked by another download or is no longer the file checked.
  void commit();

 private:
  FileSpec spec_;
  FileIdentity checked_;
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
// (unless replace_if_different: then the answer is false, and the file stays until the new one
// is verified and renamed over it).
bool present_and_verified(const FileSpec& spec, bool* hashed_now = nullptr);

}  // namespace minrnn::fetch
