#include "fetch/download.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <utility>

#include "datasets/catalog.h"
#include "io/atomic_file.h"

namespace minrnn::fetch {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void check_spec(const FileSpec& spec) {
  if (spec.url.empty() || spec.path.empty() || spec.size < 0 || spec.checksum.hex.empty()) {
    throw std::invalid_argument("download of '" + spec.url + "' to '" + spec.path +
                                "': the URL, the path, the size and the checksum are required");
  }
}

// The sha256 recorded in <path>.sha256 ("<hex>  <name>", as sha256sum writes it) while the file is
// the one it was recorded for: the record carries that file's modification time as its own (set
// by record_sha256), so a file replaced or touched since has another and is hashed again. ""
// otherwise. (Comparing which is newer would trust a file replaced within one tick of the clock.)
std::string recorded_sha256(const std::string& path) {
  const std::string record = checksum_record_path(path);
  struct stat file = {};
  struct stat rec = {};
  if (::stat(path.c_str(), &file) != 0 || ::stat(record.c_str(), &rec) != 0) return "";
  if (file.st_mtim.tv_sec != rec.st_mtim.tv_sec || file.st_mtim.tv_nsec != rec.st_mtim.tv_nsec)
    return "";
  std::ifstream in(record);
  std::string hex, name;
  in >> hex >> name;
  return name == fs::path(path).filename().string() ? hex : "";
}

void record_sha256(const FileSpec& spec) {
  if (spec.checksum.kind != HashKind::kSha256) return;
  const std::string record = checksum_record_path(spec.path);
  try {
    io::write_file_atomically(
        record, spec.checksum.hex + "  " + fs::path(spec.path).filename().string() + "\n");
  } catch (const io::WriteError&) {
    return;  // a folder we may read but not write: the file is right, it will only be hashed again
  }
  struct stat file = {};
  if (::stat(spec.path.c_str(), &file) != 0) return;
  const struct timespec times[2] = {file.st_atim, file.st_mtim};
  ::utimensat(AT_FDCWD, record.c_str(), times, 0);  // failing, the file is only hashed again
}

// Sleeps, waking early (true) when a stop is asked.
bool stopped_while_waiting(double seconds, const std::function<bool()>& should_stop) {
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    if (should_stop && should_stop()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return should_stop && should_stop();
}

// What a download that ends now leaves for the next run (the caller says how to resume).
std::string kept_text(const std::string& part, int64_t have, int64_t size) {
  if (have == 0) return "nothing kept";
  return part + " keeps " + std::to_string(have) + " of " + std::to_string(size) + " bytes";
}

}  // namespace

std::string checksum_record_path(const std::string& path) {
  return path + ".sha256";
}

bool present_and_verified(const FileSpec& spec, bool* hashed_now) {
  if (hashed_now) *hashed_now = false;
  std::error_code ec;
  const auto status = fs::status(spec.path, ec);
  if (!fs::exists(status)) return false;
  if (!fs::is_regular_file(status)) throw FetchError(spec.path + " is there but is not a file");
  const int64_t size = int64_t(fs::file_size(spec.path, ec));
  if (size != spec.size) {
    if (spec.replace_if_different) return false;
    throw FetchError(spec.path + " is there with " + std::to_string(size) + " bytes, but the " +
                     "file of " + spec.url + " is listed at " + std::to_string(spec.size) +
                     ": not that file (another version, or an interrupted download by another "
                     "tool); move it away and run again");
  }
  if (spec.checksum.kind == HashKind::kSha256 && recorded_sha256(spec.path) == spec.checksum.hex)
    return true;
  if (hashed_now) *hashed_now = true;
  const std::string got = file_checksum(spec.path, spec.checksum.kind);
  if (got != spec.checksum.hex) {
    if (spec.replace_if_different) return false;
    throw FetchError(spec.path + " is there but its " + describe(spec.checksum.kind, got) +
                     " is not the " + describe(spec.checksum.kind, spec.checksum.hex) + " of " +
                     spec.url + "; move it away and run again");
  }
  record_sha256(spec);
  return true;
}

namespace {

// One file's way from its .part to a verified .part: the tries, what each receives, the checks.
class PartDownload {
 public:
  PartDownload(const FileSpec& spec, const DownloadOptions& options, DownloadResult* result)
      : spec_(spec),
        options_(options),
        result_(result),
        part_(data::download_part_path(spec.path), spec.url),
        hasher_(spec.checksum.kind, spec.size),
        name_(fs::path(spec.path).filename().string()) {
    have_ = part_.size();
    if (have_ > spec.size) part_.truncate_to(0), have_ = 0;  // not a prefix of this file
    if (have_ > 0) hash_file_prefix(part_.path(), have_, hasher_);
    part_.seek_end();
    result_->resumed_from = have_;
  }

  VerifiedPart run() {
    say_start();
    Progress progress(options_.progress, name_, spec_.size, have_);
    progress_ = &progress;
    fetch_rest();
    std::string got = hasher_.hex_digest();  // once: it ends the hash
    if (got != spec_.checksum.hex && resumed_) {
      // The .part may hold the start of a version the server has since replaced (a file the hub
      // updates in place): the whole file once more before the checksum is called wrong.
      say("the checksum of the resumed download is wrong; downloading it again from byte 0");
      part_.truncate_to(0);
      hasher_.reset();
      have_ = 0;
      resumed_ = false;
      fetch_rest();
      got = hasher_.hex_digest();
    }
    progress.finish();
    verify(got);
    const FileIdentity checked = part_.identity();
    part_.close();
    return VerifiedPart(spec_, checked);
  }

 private:
  enum class Refusal { kNone, kWrite, kOtherSize, kOtherStart, kNoContentRange };

  void say(const std::string& line) {
    if (options_.progress.style == ProgressStyle::kNone) return;
    progress_->finish();
    std::fprintf(options_.progress.out, "%s: %s\n", name_.c_str(), line.c_str());
  }

  void say_start() {
    if (options_.progress.style == ProgressStyle::kNone) return;
    // Where it goes, too: the folder follows $D4RL_DATASET_DIR or the Minari path, not the cwd.
    const std::string folder = fs::path(spec_.path).parent_path().string();
    std::fprintf(options_.progress.out, "%s: %s (%s) into %s%s\n", name_.c_str(), spec_.url.c_str(),
                 human_bytes(spec_.size).c_str(), folder.empty() ? "." : folder.c_str(),
                 have_ > 0 ? (", resuming at byte " + std::to_string(have_)).c_str() : "");
  }

  // Tries until the .part has every byte; a try that brought bytes starts the count afresh.
  void fetch_rest() {
    double delay = options_.retry_delay_s;
    for (int failures = 0; have_ < spec_.size;) {
      const int64_t before = have_;
      resumed_ |= have_ > 0;
      if (transfer()) return;
      if (have_ > before) failures = 0, delay = options_.retry_delay_s;
      if (++failures >= options_.attempts) {
        progress_->finish();
        throw FetchError("cannot download " + spec_.url + ": " + last_error_ +
                         " (tries failed in a row: " + std::to_string(failures) + "; " +
                         kept_text(part_.path(), have_, spec_.size) + ": run again to resume)");
      }
      wait_before_retry(&delay);
    }
  }

  // The retry delay, or the server's Retry-After when longer (up to max_retry_after_s).
  void wait_before_retry(double* delay) {
    double wait = *delay;
    std::string why;
    if (retry_after_s_ > wait) {
      wait = std::min(retry_after_s_, options_.max_retry_after_s);
      why = "; the server asks to wait " + std::to_string(int64_t(retry_after_s_)) +
            " s (Retry-After)" +
            (wait < retry_after_s_ ? ", waiting at most " + seconds_text(wait) + " s" : "");
    }
    say(last_error_ + why + "; resuming from byte " + std::to_string(have_) + " in " +
        seconds_text(wait) + " s");
    if (stopped_while_waiting(wait, options_.http.should_stop))
      throw StopRequested("stopped; " + kept_text(part_.path(), have_, spec_.size));
    *delay *= 2;
  }

  // One request for the bytes from have_ on: true when it brought the rest, false when it may be
  // tried again (last_error_ says why); throws otherwise.
  bool transfer() {
    HttpOptions http = options_.http;
    http.on_tick = [this](int64_t) { progress_->update(have_); };
    first_chunk_ = true;
    refusal_ = Refusal::kNone;
    start_ = have_;
    ++result_->requests;
    const TransferResult r = http_get(spec_.url, whole_file_ ? 0 : have_, http,
                                      [this](const HttpResponse& resp, const char* data, size_t n) {
                                        return receive(resp, data, n);
                                      });
    if (r.stopped) {
      progress_->finish();
      throw StopRequested("stopped; " + kept_text(part_.path(), have_, spec_.size));
    }
    if (refusal_ == Refusal::kWrite) progress_->finish(), part_.fail_write_now();
    if (refusal_ != Refusal::kNone || (r.complete && have_ < spec_.size)) refuse_answer(r);
    if (r.complete) return true;
    if (r.response.status == 416 && have_ > 0 && !whole_file_) {
      // The server's file ends before the .part does (or it will not serve ranges): ask for all
      // of it; the bytes the .part has are skipped, and the size and checksum decide.
      whole_file_ = true;
      return transfer();
    }
    last_error_ = r.error;
    retry_after_s_ = r.response.retry_after_s;
    if (r.transient) return false;
    progress_->finish();
    throw FetchError("cannot download " + spec_.url + ": " + r.error + " (" +
                     kept_text(part_.path(), have_, spec_.size) + ")");
  }

  // An answer that is not the file: what it wrote is undone, what the .part had is kept.
  [[noreturn]] void refuse_answer(const TransferResult& r) {
    progress_->finish();
    part_.truncate_to(start_);
    const std::string kept = " (" + kept_text(part_.path(), start_, spec_.size) + ")";
    if (refusal_ == Refusal::kNoContentRange) {
      throw FetchError("cannot download " + spec_.url + ": asked for the bytes from " +
                       std::to_string(start_) + " on, the server answered 206 without a " +
                       "Content-Range saying which bytes it sent" + kept);
    }
    if (refusal_ == Refusal::kOtherStart) {
      throw FetchError("cannot download " + spec_.url + ": asked for the bytes from " +
                       std::to_string(start_) + " on, the server sent them from " +
                       std::to_string(offered_) + kept);
    }
    const int64_t got = offered_ >= 0 ? offered_ : r.complete ? body_at_ : -1;
    throw FetchError(spec_.url + ": size mismatch: expected " + std::to_string(spec_.size) +
                     " bytes, the server " +
                     (got >= 0 ? "has " + std::to_string(got) : "sends more") + " (HTTP " +
                     std::to_string(r.response.status) + "): not the published file" + kept);
  }

  // Where this answer's body starts in the file, and whether its length is the file's.
  bool check_answer(const HttpResponse& resp) {
    body_at_ = 0;  // a 200: the whole file, whatever was asked
    if (resp.status == 206) {
      if (resp.range_start < 0) return (refusal_ = Refusal::kNoContentRange), false;
      if (resp.range_start > have_) {
        offered_ = resp.range_start;
        return (refusal_ = Refusal::kOtherStart), false;
      }
      body_at_ = resp.range_start;
    }
    if (resp.content_length >= 0 && body_at_ + resp.content_length != spec_.size) {
      offered_ = body_at_ + resp.content_length;
      return (refusal_ = Refusal::kOtherSize), false;
    }
    return true;
  }

  // The body as it arrives: what the .part has already is skipped, the rest written and hashed.
  bool receive(const HttpResponse& resp, const char* data, size_t n) {
    if (first_chunk_ && !check_answer(resp)) return false;
    first_chunk_ = false;
    if (body_at_ + int64_t(n) > spec_.size) return (refusal_ = Refusal::kOtherSize), false;
    const size_t skip = size_t(std::clamp<int64_t>(have_ - body_at_, 0, int64_t(n)));
    body_at_ += int64_t(n);
    data += skip, n -= skip;
    if (n == 0) return true;
    if (!part_.write(data, n)) return (refusal_ = Refusal::kWrite), false;
    hasher_.update(data, n);
    have_ += int64_t(n);
    result_->bytes_received += int64_t(n);
    progress_->update(have_);
    return true;
  }

  void verify(const std::string& got) {
    if (got == spec_.checksum.hex) return;
    part_.remove();
    throw FetchError(spec_.url + ": checksum mismatch: expected " +
                     describe(spec_.checksum.kind, spec_.checksum.hex) + ", got " +
                     describe(spec_.checksum.kind, got) + " (" + std::to_string(spec_.size) +
                     " bytes); the download is removed, nothing kept");
  }

  const FileSpec& spec_;
  const DownloadOptions& options_;
  DownloadResult* result_;
  PartFile part_;
  Hasher hasher_;
  std::string name_;
  int64_t have_ = 0;         // bytes in the .part
  int64_t start_ = 0;        // ... when this answer began
  bool resumed_ = false;     // the bytes came in more than one answer
  bool whole_file_ = false;  // ask without a Range (the server answered 416)
  Progress* progress_ = nullptr;
  bool first_chunk_ = true;
  Refusal refusal_ = Refusal::kNone;
  int64_t body_at_ = 0;   // where in the file the answer's next byte goes
  int64_t offered_ = -1;  // what the server said it would send, when not what was asked
  double retry_after_s_ = -1;
  std::string last_error_;
};

}  // namespace

std::optional<VerifiedPart> fetch_part(const FileSpec& spec, const DownloadOptions& options,
                                       DownloadResult* result) {
  check_spec(spec);
  const auto began = Clock::now();
  *result = DownloadResult{};
  if (present_and_verified(spec, &result->hashed_present)) {
    result->already_present = true;
    return std::nullopt;
  }
  const fs::path folder = fs::path(spec.path).parent_path();
  std::error_code ec;
  if (!folder.empty() && !fs::create_directories(folder, ec) && ec)
    throw io::WriteError("cannot create the folder " + folder.string() + ": " + ec.message());
  VerifiedPart part = PartDownload(spec, options, result).run();
  result->seconds = std::chrono::duration<double>(Clock::now() - began).count();
  return part;
}

void VerifiedPart::commit() {
  const std::string part = data::download_part_path(spec_.path);
  FileIdentity now;
  if (!identity_of(part, &now) && identity_of(spec_.path, &now) && now.same_inode(checked_)) {
    record_sha256(spec_);  // another download of the same file renamed it already (a rename
    return;                // changes the status time, not the inode)
  }
  PartFile locked(part, spec_.url);  // no other download writes it while it is renamed
  if (locked.size() != spec_.size || !(locked.identity() == checked_)) {
    throw FetchError(part + " changed after it was checked (another download of " + spec_.url +
                     "?); run again");
  }
  io::commit_file(part, spec_.path);
  locked.close();
  record_sha256(spec_);
}

DownloadResult download_file(const FileSpec& spec, const DownloadOptions& options) {
  DownloadResult result;
  if (std::optional<VerifiedPart> part = fetch_part(spec, options, &result)) part->commit();
  return result;
}

}  // namespace minrnn::fetch
