// fetch::download_file against a real HTTP server on 127.0.0.1 (tests/fetch/http_server.h): a
// fresh download, a resume after a cut connection (the second request must ask for a Range), a
// checksum or size mismatch, 404 / 403 / refused / silent servers, a present file, a stop. The
// file is a small D4RL-layout one; its expected sha256 comes from coreutils' sha256sum, not from
// the code under test.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "datasets/catalog.h"
#include "fetch/download.h"
#include "tests/fetch/served_file.h"

namespace minrnn::fetch {
namespace {

using data::download_part_path;
using testing::expect_error_naming;
using testing::HttpServer;
using testing::quick;
using testing::read_text;
using testing::TempDir;
namespace fs = std::filesystem;
using Served = testing::ServedFile;

TEST(Checksum, KnownDigests) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  Hasher blob(HashKind::kGitBlobSha1, 6);  // `echo hello | git hash-object --stdin`
  blob.update("hello\n", 6);
  EXPECT_EQ(blob.hex_digest(), "ce013625030ba8dba906f756967f9e9ca394464a");
}

TEST(Checksum, AFileHashedInTwoPiecesIsHashedWhole) {
  Served s;
  Hasher h(HashKind::kSha256);
  hash_file_prefix(s.served.string(), 1000, h);
  h.update(s.bytes.data() + 1000, s.bytes.size() - 1000);
  EXPECT_EQ(h.hex_digest(), s.spec.checksum.hex);
  EXPECT_EQ(file_checksum(s.served.string(), HashKind::kSha256), s.spec.checksum.hex);
}

// What a download prints: in a log, whole lines with bytes, share, rate and ETA; on a terminal,
// one line rewritten in place (carriage return, clear to the end) and ended once.
TEST(Progress, ALogGetsLinesATerminalOneLineRewrittenInPlace) {
  for (ProgressStyle style : {ProgressStyle::kLog, ProgressStyle::kTerminal}) {
    FILE* out = std::tmpfile();
    ProgressOptions options;
    options.style = style;
    options.log_every_s = 0;
    options.out = out;
    Progress progress(options, "f.hdf5", 2'000'000, 500'000);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));  // the terminal's 0.2 s pace
    progress.update(1'000'000);
    progress.finish();
    std::rewind(out);
    std::string text(4096, '\0');
    text.resize(std::fread(text.data(), 1, text.size(), out));
    std::fclose(out);
    EXPECT_NE(text.find("f.hdf5  1.0 MB of 2.0 MB (50%), "), std::string::npos) << text;
    EXPECT_NE(text.find(" MB/s, ETA "), std::string::npos) << text;
    if (style == ProgressStyle::kTerminal) {
      EXPECT_EQ(text[0], '\r') << text;
      EXPECT_NE(text.find("\033[K"), std::string::npos);
      EXPECT_EQ(text.back(), '\n');
    } else {
      EXPECT_EQ(text.find('\r'), std::string::npos) << text;
    }
  }
  EXPECT_EQ(human_bytes(152756557), "152.8 MB");
}

TEST(Download, AFreshDownloadLandsVerifiedUnderItsName) {
  Served s;
  const DownloadResult r = download_file(s.spec, quick());
  EXPECT_FALSE(r.already_present);
  EXPECT_EQ(r.bytes_received, s.spec.size);
  EXPECT_EQ(read_text(s.local), s.bytes);
  EXPECT_FALSE(fs::exists(download_part_path(s.spec.path)));
  EXPECT_EQ(read_text(checksum_record_path(s.spec.path)),
            s.spec.checksum.hex + "  hopper_medium-v2.hdf5\n");  // sha256sum -c reads it
  ASSERT_EQ(s.server.requests().size(), 1u);
  EXPECT_EQ(s.server.requests()[0].range, "");
}

TEST(Download, ACutConnectionIsResumedWithARangeRequest) {
  Served s;
  s.server.cut_next_file_after(5000);
  expect_error_naming([&] { download_file(s.spec, quick()); },
                      {s.spec.url, "connection was cut after 5000 bytes", ".part keeps 5000"});
  EXPECT_FALSE(fs::exists(s.local));  // nothing half-written has the final name
  EXPECT_EQ(fs::file_size(download_part_path(s.spec.path)), 5000u);

  const DownloadResult r = download_file(s.spec, quick());
  EXPECT_EQ(r.resumed_from, 5000);
  EXPECT_EQ(r.bytes_received, s.spec.size - 5000);
  EXPECT_EQ(read_text(s.local), s.bytes);
  ASSERT_EQ(s.server.requests().size(), 2u);
  EXPECT_EQ(s.server.requests()[1].range, "bytes=5000-");
}

TEST(Download, ACutConnectionIsRetriedWithinOneCall) {
  Served s;
  s.server.cut_next_file_after(7000);
  const DownloadResult r = download_file(s.spec, quick(2));
  EXPECT_EQ(r.requests, 2);
  EXPECT_EQ(read_text(s.local), s.bytes);
  EXPECT_EQ(s.server.requests()[1].range, "bytes=7000-");
}

TEST(Download, AServerIgnoringTheRangeIsReadFromTheStart) {
  Served s;
  fs::create_directories(s.local.parent_path());
  std::ofstream(download_part_path(s.spec.path), std::ios::binary) << s.bytes.substr(0, 3000);
  s.server.ignore_range(true);
  download_file(s.spec, quick());
  EXPECT_EQ(s.server.requests()[0].range, "bytes=3000-");
  EXPECT_EQ(read_text(s.local), s.bytes);
}

TEST(Download, AChecksumMismatchRemovesThePartAndNamesUrlExpectedAndGot) {
  Served s;
  FileSpec wrong = s.spec;
  wrong.checksum.hex = std::string(64, 'a');
  expect_error_naming([&] { download_file(wrong, quick()); },
                      {s.spec.url, "checksum mismatch", "expected sha256 " + wrong.checksum.hex,
                       "got sha256 " + s.spec.checksum.hex});
  EXPECT_FALSE(fs::exists(s.local));
  EXPECT_FALSE(fs::exists(download_part_path(s.spec.path)));
}

TEST(Download, ASizeMismatchIsRefusedBeforeTheBodyIsKept) {
  Served s;
  FileSpec wrong = s.spec;
  wrong.size += 1;
  expect_error_naming(
      [&] { download_file(wrong, quick()); },
      {s.spec.url, "expected " + std::to_string(wrong.size), "has " + std::to_string(s.spec.size)});
  EXPECT_FALSE(fs::exists(s.local));
  EXPECT_FALSE(fs::exists(download_part_path(s.spec.path)));
}

// A file at the destination of another size than the catalog lists is refused naming both sizes,
// the listed one as the catalog's (walk 47: "URL has N" named the catalog's size the mirror's).
TEST(Download, AFileThereOfAnotherSizeIsNotThatFile) {
  Served s;
  fs::create_directories(s.local.parent_path());
  std::ofstream(s.local, std::ios::binary) << s.bytes.substr(0, 100);
  expect_error_naming([&] { download_file(s.spec, quick()); },
                      {s.spec.path + " is there with 100 bytes, but the file of " + s.spec.url +
                           " is listed at " + std::to_string(s.spec.size),
                       "move it away"});
  EXPECT_EQ(fs::file_size(s.local), 100u);
  EXPECT_TRUE(s.server.requests().empty());
}

TEST(Download, NotFoundAndForbiddenNameTheUrlAndAreNotRetried) {
  Served s;
  FileSpec missing = s.spec;
  missing.url = s.server.url("/absent-v2.hdf5");
  expect_error_naming([&] { download_file(missing, quick(3)); }, {missing.url, "HTTP 404"});
  s.server.answer("/hopper_medium-v2.hdf5", 403);
  expect_error_naming([&] { download_file(s.spec, quick(3)); }, {s.spec.url, "HTTP 403"});
  EXPECT_EQ(s.server.requests().size(), 2u);
  EXPECT_FALSE(fs::exists(download_part_path(s.spec.path)));  // no empty .part left behind
}

TEST(Download, ARefusedConnectionNamesTheUrl) {
  Served s;
  // A port nobody listens on: bound, then closed.
  int port = 0;
  {
    HttpServer gone(s.dir.path);
    port = gone.port();
  }
  FileSpec spec = s.spec;
  spec.url = "http://127.0.0.1:" + std::to_string(port) + "/hopper_medium-v2.hdf5";
  expect_error_naming([&] { download_file(spec, quick()); }, {spec.url, "cannot connect"});
}

TEST(Download, ASilentServerTimesOut) {
  Served s;
  s.server.cut_next_file_after(1000, /*stall=*/true);
  DownloadOptions options = quick();
  options.http.low_speed_time_s = 0.3;
  expect_error_naming([&] { download_file(s.spec, options); }, {s.spec.url, "too slow"});
  EXPECT_EQ(fs::file_size(download_part_path(s.spec.path)), 1000u);
}

TEST(Download, ASecondDownloadOfAVerifiedFileIsANoOp) {
  Served s;
  download_file(s.spec, quick());
  DownloadResult again = download_file(s.spec, quick());
  EXPECT_TRUE(again.already_present);
  EXPECT_FALSE(again.hashed_present);  // the record beside it stands for the sha256
  EXPECT_EQ(s.server.requests().size(), 1u);

  // A file put there after the record (another tool's copy) is hashed once more.
  fs::last_write_time(
      s.local, fs::last_write_time(checksum_record_path(s.spec.path)) + std::chrono::seconds(5));
  again = download_file(s.spec, quick());
  EXPECT_TRUE(again.already_present);
  EXPECT_TRUE(again.hashed_present);

  // One of the same size with other bytes is refused, and left as it is.
  std::string other = s.bytes;
  other[100] ^= 1;
  std::ofstream(s.local, std::ios::binary) << other;
  expect_error_naming([&] { download_file(s.spec, quick()); },
                      {s.spec.path, s.spec.url, "move it away"});
  EXPECT_EQ(read_text(s.local), other);
  EXPECT_EQ(s.server.requests().size(), 1u);
}

TEST(Download, AStopKeepsThePartAndTheNextRunResumes) {
  Served s;
  s.server.set_bytes_per_second(20000);
  DownloadOptions options = quick();
  const std::string part = download_part_path(s.spec.path);
  options.http.should_stop = [&] {
    std::error_code ec;
    return fs::file_size(part, ec) >= 2000 && !ec;
  };
  EXPECT_THROW(download_file(s.spec, options), StopRequested);
  const auto kept = fs::file_size(part);
  EXPECT_GE(kept, 2000u);
  EXPECT_FALSE(fs::exists(s.local));

  s.server.set_bytes_per_second(0);
  const DownloadResult r = download_file(s.spec, quick());
  EXPECT_EQ(r.resumed_from, int64_t(kept));
  EXPECT_EQ(read_text(s.local), s.bytes);
  EXPECT_EQ(s.server.requests().back().range, "bytes=" + std::to_string(kept) + "-");
}

TEST(Download, RedirectsAreFollowed) {
  Served s;
  s.server.redirect("/elsewhere.hdf5", "/hopper_medium-v2.hdf5");
  FileSpec spec = s.spec;
  spec.url = s.server.url("/elsewhere.hdf5");
  download_file(spec, quick());
  EXPECT_EQ(read_text(s.local), s.bytes);
}

TEST(Download, TwoDownloadsIntoOnePartAreRefused) {
  Served s;
  s.server.set_bytes_per_second(20000);
  std::atomic<bool> started{false};
  DownloadOptions slow = quick();
  slow.http.should_stop = [&] {
    started = fs::exists(download_part_path(s.spec.path));
    return false;
  };
  std::thread first([&] { download_file(s.spec, slow); });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  expect_error_naming([&] { download_file(s.spec, quick()); },
                      {download_part_path(s.spec.path), "being written by another download"});
  s.server.set_bytes_per_second(0);
  first.join();
  EXPECT_EQ(read_text(s.local), s.bytes);
}

}  // namespace
}  // namespace minrnn::fetch
