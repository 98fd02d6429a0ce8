#include "fetch/download.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <utility>

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

// <path>.part, open and locked (flock: released by the kernel however the process ends).
class PartFile {
 public:
  explicit PartFile(const FileSpec& spec) : path_(part_path(spec.path)), url_(spec.url) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw io::WriteError("cannot write " + path_ + ": " + std::strerror(errno) +
                           " (downloading " + url_ + ")");
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw FetchError(path_ + " is being written by another download of " + url_ +
                       "; wait for it to finish");
    }
  }
  // A .part that never got a byte (a 404, a refused connection) is not left behind.
  ~PartFile() {
    if (fd_ < 0) return;
    if (size() == 0) ::unlink(path_.c_str());
    ::close(fd_);
  }
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  int64_t size() const {
    struct stat st {};
    return ::fstat(fd_, &st) == 0 ? int64_t(st.st_size) : 0;
  }
  void truncate() {
    if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0) fail_write(errno);
  }
  void seek_end() {
    if (::lseek(fd_, 0, SEEK_END) < 0) fail_write(errno);
  }
  // False on failure; the reason is kept for fail_write_now().
  bool write(const char* data, size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, data, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return !(errno_ = errno);
      data += w, n -= size_t(w);
    }
    return true;
  }
  [[noreturn]] void fail_write_now() { fail_write(errno_); }
  void remove() {
    ::unlink(path_.c_str());
    ::close(fd_);
    fd_ = -1;
  }
  int release() { return std::exchange(fd_, -1); }
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail_write(int err) {
    throw io::WriteError("cannot write " + path_ + ": " + std::strerror(err) + " (downloading " +
                         url_ + "; what it holds is kept: the same command resumes there)");
  }
  std::string path_, url_;
  int fd_ = -1;
  int errno_ = 0;
};

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

void remove_present(const FileSpec& spec) {
  std::error_code ec;
  fs::remove(checksum_record_path(spec.path), ec);
  fs::remove(spec.path, ec);
  if (ec) throw FetchError("cannot replace " + spec.path + ": " + ec.message());
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

std::string stopped_message(const std::string& part, int64_t have, int64_t size) {
  return "stopped; " + part + " keeps " + std::to_string(have) + " of " + std::to_string(size) +
         " bytes: run the same command to resume";
}

}  // namespace

std::string part_path(const std::string& path) {
  return path + ".part";
}

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
    if (spec.replace_if_different) return remove_present(spec), false;
    throw FetchError(spec.path + " is there with " + std::to_string(size) + " bytes, but " +
                     spec.url + " has " + std::to_string(spec.size) +
                     ": not that file (another version, or an interrupted download by another "
                     "tool); move it away and run again");
  }
  if (spec.checksum.kind == HashKind::kSha256 && recorded_sha256(spec.path) == spec.checksum.hex)
    return true;
  if (hashed_now) *hashed_now = true;
  const std::string got = file_checksum(spec.path, spec.checksum.kind);
  if (got != spec.checksum.hex) {
    if (spec.replace_if_different) return remove_present(spec), false;
    throw FetchError(spec.path + " is there but its " + describe(spec.checksum.kind, got) +
                     " is not the " + describe(spec.checksum.kind, spec.checksum.hex) + " of " +
                     spec.url + "; move it away and run again");
  }
  record_sha256(spec);
  return true;
}

namespace {

// One file's way from its .part to a verified .part: the attempts, what each receives, the checks.
class PartDownload {
 public:
  PartDownload(const FileSpec& spec, const DownloadOptions& options, DownloadResult* result)
      : spec_(spec),
        options_(options),
        result_(result),
        part_(spec),
        hasher_(spec.checksum.kind, spec.size),
        name_(fs::path(spec.path).filename().string()) {
    have_ = part_.size();
    if (have_ > spec.size) part_.truncate(), have_ = 0;  // not a prefix of this file
    if (have_ > 0) hash_file_prefix(part_.path(), have_, hasher_);
    part_.seek_end();
    result_->resumed_from = have_;
  }

  VerifiedPart run() {
    say_start();
    Progress progress(options_.progress, name_, spec_.size, have_);
    progress_ = &progress;
    double delay = options_.retry_delay_s;
    for (int attempt = 1; have_ < spec_.size; ++attempt) {
      if (attempt > options_.attempts) {
        throw FetchError("cannot download " + spec_.url + ": " + last_error_ + " (" +
                         std::to_string(options_.attempts) + " tries; " + part_.path() + " keeps " +
                         std::to_string(have_) + " bytes: run again to resume)");
      }
      if (attempt > 1) wait_before_retry(&delay);
      transfer();
    }
    progress.finish();
    verify();
    return VerifiedPart(spec_, part_.release());
  }

 private:
  enum class Refusal { kNone, kWrite, kOtherSize, kOtherStart };

  void say_start() {
    if (options_.progress.style == ProgressStyle::kNone) return;
    std::fprintf(options_.progress.out, "%s: %s (%s)%s\n", name_.c_str(), spec_.url.c_str(),
                 human_bytes(spec_.size).c_str(),
                 have_ > 0 ? (", resuming at byte " + std::to_string(have_)).c_str() : "");
  }

  void wait_before_retry(double* delay) {
    if (options_.progress.style != ProgressStyle::kNone) {
      std::fprintf(options_.progress.out, "%s: %s; resuming from byte %lld in %.0f s\n",
                   name_.c_str(), last_error_.c_str(), (long long)have_, *delay);
    }
    if (stopped_while_waiting(*delay, options_.http.should_stop))
      throw StopRequested(stopped_message(part_.path(), have_, spec_.size));
    *delay *= 2;
  }

  // One request for the bytes from have_ on; throws unless it may be tried again.
  void transfer() {
    HttpOptions http = options_.http;
    http.on_tick = [this] { progress_->update(have_); };
    first_chunk_ = true;
    refusal_ = Refusal::kNone;
    ++result_->requests;
    const TransferResult r = http_get(spec_.url, have_, http,
                                      [this](const HttpResponse& resp, const char* data, size_t n) {
                                        return receive(resp, data, n);
                                      });
    if (r.stopped) {
      progress_->finish();
      throw StopRequested(stopped_message(part_.path(), have_, spec_.size));
    }
    if (refusal_ == Refusal::kWrite) progress_->finish(), part_.fail_write_now();
    if (refusal_ == Refusal::kOtherStart) {
      throw FetchError("cannot download " + spec_.url + ": asked for the bytes from " +
                       std::to_string(have_) + " on, the server sent them from " +
                       std::to_string(offered_));
    }
    if (refusal_ == Refusal::kOtherSize || (r.complete && have_ < spec_.size)) {
      progress_->finish();
      part_.remove();
      const int64_t got = offered_ >= 0 ? offered_ : r.complete ? have_ : -1;
      throw FetchError(spec_.url + ": size mismatch: expected " + std::to_string(spec_.size) +
                       " bytes, the server " +
                       (got >= 0 ? "has " + std::to_string(got) : "sends more") +
                       "; not the published file, nothing kept");
    }
    if (r.complete) return;
    if (r.response.status == 416) {  // the server's file ends before the .part does
      progress_->finish();
      part_.remove();
      throw FetchError(spec_.url + ": size mismatch: the server has fewer than the " +
                       std::to_string(have_) + " bytes already fetched (HTTP 416), expected " +
                       std::to_string(spec_.size) + "; not the published file, nothing kept");
    }
    last_error_ = r.error;
    if (!r.transient) {
      progress_->finish();
      throw FetchError("cannot download " + spec_.url + ": " + r.error);
    }
  }

  // The body as it arrives: checked against what was asked and what is expected, then kept.
  bool receive(const HttpResponse& resp, const char* data, size_t n) {
    if (first_chunk_) {
      first_chunk_ = false;
      if (resp.status == 206 && resp.range_start != have_) {
        offered_ = resp.range_start;
        return (refusal_ = Refusal::kOtherStart), false;
      }
      if (resp.status != 206 && have_ > 0) {  // the server ignored the Range: from the start
        part_.truncate();
        hasher_.reset();
        have_ = 0;
      }
      if (resp.content_length >= 0 && have_ + resp.content_length != spec_.size) {
        offered_ = have_ + resp.content_length;
        return (refusal_ = Refusal::kOtherSize), false;
      }
    }
    if (have_ + int64_t(n) > spec_.size) return (refusal_ = Refusal::kOtherSize), false;
    if (!part_.write(data, n)) return (refusal_ = Refusal::kWrite), false;
    hasher_.update(data, n);
    have_ += int64_t(n);
    result_->bytes_received += int64_t(n);
    progress_->update(have_);
    return true;
  }

  void verify() {
    const std::string got = hasher_.hex_digest();
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
  int64_t have_ = 0;
  Progress* progress_ = nullptr;
  bool first_chunk_ = true;
  Refusal refusal_ = Refusal::kNone;
  int64_t offered_ = -1;  // what the server said it would send, when not what was asked
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

VerifiedPart::VerifiedPart(const FileSpec& spec, int fd) : spec_(spec), fd_(fd) {}

VerifiedPart::VerifiedPart(VerifiedPart&& other) noexcept
    : spec_(std::move(other.spec_)), fd_(std::exchange(other.fd_, -1)) {}

VerifiedPart::~VerifiedPart() {
  if (fd_ >= 0) ::close(fd_);
}

void VerifiedPart::commit() {
  io::commit_file(part_path(spec_.path), spec_.path);
  record_sha256(spec_);
  ::close(std::exchange(fd_, -1));
}

DownloadResult download_file(const FileSpec& spec, const DownloadOptions& options) {
  DownloadResult result;
  if (std::optional<VerifiedPart> part = fetch_part(spec, options, &result)) part->commit();
  return result;
}

}  // namespace minrnn::fetch
