// fetch::download_file against servers that answer badly (an audit of downloads against hostile
// servers, 2026-11-28): a body that only ends with the connection, a bad answer while resuming
// (an HTML page, a 204, a 302 without a Location, a short body, a 206 without a Content-Range, a
// compressed body), a trickle, a Retry-After, a server that cuts every few kB, a .part of a
// version since replaced, a file updated in place, a .part replaced before its commit. Each time:
// an error naming the URL and what was expected, and what the .part had is kept.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "datasets/catalog.h"
#include "fetch/download.h"
#include "tests/fetch/served_file.h"

namespace minrnn::fetch {
namespace {

using data::download_part_path;
using testing::expect_error_naming;
using testing::quick;
using testing::read_text;
namespace fs = std::filesystem;
using Served = testing::ServedFile;
using Clock = std::chrono::steady_clock;

const std::string kPath = "/hopper_medium-v2.hdf5";

std::string head(const std::string& status, const std::string& headers = "") {
  return "HTTP/1.1 " + status + "\r\n" + headers + "Connection: close\r\n\r\n";
}

std::string length(size_t n) {
  return "Content-Length: " + std::to_string(n) + "\r\n";
}

// A .part holding the first `n` bytes of the file, as a cut download leaves it.
void leave_part(const Served& s, size_t n) {
  fs::create_directories(s.local.parent_path());
  std::ofstream(download_part_path(s.spec.path), std::ios::binary) << s.bytes.substr(0, n);
}

// The .part still holds the first `n` bytes, and the next run resumes there and completes.
void expect_kept_and_resumed(Served& s, size_t n) {
  ASSERT_TRUE(fs::exists(download_part_path(s.spec.path)));
  EXPECT_EQ(read_text(download_part_path(s.spec.path)), s.bytes.substr(0, n));
  download_file(s.spec, quick());
  EXPECT_EQ(read_text(s.local), s.bytes);
  EXPECT_EQ(s.server.requests().back().range, "bytes=" + std::to_string(n) + "-");
}

TEST(HostileServer, ABodyEndedOnlyByTheConnectionClosingIsACutAndKept) {
  Served s;
  s.server.raw_answers(kPath, {head("200 OK") + s.bytes.substr(0, 5000)});
  expect_error_naming([&] { download_file(s.spec, quick()); },
                      {s.spec.url, "closed after 5000 bytes", "no Content-Length", "taken as cut",
                       ".part keeps 5000"});
  expect_kept_and_resumed(s, 5000);
}

TEST(HostileServer, OneBadAnswerWhileResumingKeepsThePart) {
  const std::string html = "<!DOCTYPE html><html><body>Please log in</body></html>";
  struct Case {
    std::string answer, says;
  };
  Served s;
  const std::vector<Case> cases = {
      {head("200 OK", length(html.size())) + html, "expected " + std::to_string(s.bytes.size()) +
                                                       " bytes, the server has " +
                                                       std::to_string(html.size())},
      {head("204 No Content"), "HTTP 204 No Content: expected 200 or 206"},
      {head("302 Found", length(s.bytes.size() - 3000)) + s.bytes.substr(3000),
       "HTTP 302 Found without a Location"},
      {head("200 OK", length(s.bytes.size() - 1000)) + s.bytes.substr(0, s.bytes.size() - 1000),
       "the server has " + std::to_string(s.bytes.size() - 1000)},
      {head("206 Partial Content", length(s.bytes.size() - 3000)) + s.bytes.substr(3000),
       "206 without a Content-Range"},
      {head("206 Partial Content", "Content-Encoding: gzip\r\n" + length(100)) +
           std::string(100, 'z'),
       "Content-Encoding: gzip"},
  };
  for (const Case& c : cases) {
    fs::remove_all(s.local.parent_path());
    leave_part(s, 3000);
    s.server.raw_answers(kPath, {c.answer});
    expect_error_naming([&] { download_file(s.spec, quick(3)); },
                        {s.spec.url, c.says, ".part keeps 3000"});
    expect_kept_and_resumed(s, 3000);
  }
}

TEST(HostileServer, ATrickleOfBytesOrHeadersGivesUp) {
  Served s;
  DownloadOptions options = quick();
  options.http.low_speed_bytes_per_s = 10000;
  options.http.low_speed_time_s = 0.3;
  s.server.set_bytes_per_second(400);  // 20 bytes every 50 ms
  expect_error_naming([&] { download_file(s.spec, options); },
                      {s.spec.url, "too slow: fewer than 10000 bytes/s over 0.3 s"});
  EXPECT_GT(fs::file_size(download_part_path(s.spec.path)),
            0u);  // kept: a retry goes on from there

  fs::remove(download_part_path(s.spec.path));
  std::string headers = "HTTP/1.1 200 OK\r\n";
  for (int i = 0; i < 300; ++i) headers += "X-Pad: " + std::to_string(i) + "\r\n";
  s.server.raw_answers(kPath, {headers});  // a header line every ~50 ms, never a body
  const auto began = Clock::now();
  expect_error_naming([&] { download_file(s.spec, options); }, {s.spec.url, "too slow"});
  EXPECT_LT(Clock::now() - began, std::chrono::seconds(3));  // not the 9 s the headers take
}

// A 429 asking for 120 s: waited for (here capped at 0.2 s), said, and the try after it works.
TEST(HostileServer, RetryAfterIsWaitedForUpToTheCap) {
  Served s;
  const std::string busy =
      head("429 Too Many Requests", "Retry-After: 120\r\n" + length(4)) + "busy";
  s.server.raw_answers(kPath, {busy, busy});
  DownloadOptions options = quick(3);
  options.retry_delay_s = 0.001;
  options.max_retry_after_s = 0.2;
  FILE* log = std::tmpfile();
  options.progress.style = ProgressStyle::kLog;
  options.progress.out = log;
  const auto began = Clock::now();
  download_file(s.spec, options);
  EXPECT_GE(Clock::now() - began, std::chrono::milliseconds(400));
  EXPECT_EQ(read_text(s.local), s.bytes);
  std::rewind(log);
  std::string text(8192, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), log));
  std::fclose(log);
  options.progress.style = ProgressStyle::kNone;
  EXPECT_NE(text.find("HTTP 429 Too Many Requests; the server asks to wait 120 s (Retry-After), "
                      "waiting at most 0.2 s"),
            std::string::npos)
      << text;

  // Retries used up with nothing received: nothing is kept, and the error says so.
  fs::remove_all(s.local.parent_path());
  s.server.raw_answers(kPath, {busy, busy});
  options.attempts = 2;
  options.max_retry_after_s = 0;
  expect_error_naming([&] { download_file(s.spec, options); },
                      {s.spec.url, "HTTP 429", "nothing kept"});
  EXPECT_FALSE(fs::exists(download_part_path(s.spec.path)));
}

// Every answer cut after 10 kB: each try brings bytes, so two tries in a row suffice.
TEST(HostileServer, TriesThatBringBytesDoNotCountAsFailures) {
  Served s;
  const size_t piece = 10000, size = s.bytes.size();
  std::vector<std::string> answers = {head("200 OK", length(size)) + s.bytes.substr(0, piece)};
  for (size_t at = piece; at + piece < size; at += piece) {
    answers.push_back(head("206 Partial Content", "Content-Range: bytes " + std::to_string(at) +
                                                      "-" + std::to_string(size - 1) + "/" +
                                                      std::to_string(size) + "\r\n" +
                                                      length(size - at)) +
                      s.bytes.substr(at, piece));
  }
  ASSERT_GE(answers.size(), 4u);
  s.server.raw_answers(kPath, answers);
  const DownloadResult r = download_file(s.spec, quick(2));
  EXPECT_EQ(r.requests, int(answers.size()) + 1);
  EXPECT_EQ(read_text(s.local), s.bytes);
}

// A .part of a version the server has since replaced (as the hub does namespace_metadata.json):
// the resumed file's checksum is wrong, so it is fetched once more from byte 0.
TEST(HostileServer, AResumedDownloadWithAWrongChecksumStartsOnceMoreFromByteZero) {
  Served s;
  fs::create_directories(s.local.parent_path());
  std::ofstream(download_part_path(s.spec.path), std::ios::binary) << std::string(3000, 'x');
  const DownloadResult r = download_file(s.spec, quick());
  EXPECT_EQ(read_text(s.local), s.bytes);
  ASSERT_EQ(s.server.requests().size(), 2u);
  EXPECT_EQ(r.requests, 2);
  EXPECT_EQ(s.server.requests()[0].range, "bytes=3000-");
  EXPECT_EQ(s.server.requests()[1].range, "");
}

// A file the server updates in place stays as it was until the new one is verified.
TEST(HostileServer, AFileUpdatedInPlaceIsReplacedOnlyByTheVerifiedNewOne) {
  Served s;
  fs::create_directories(s.local.parent_path());
  std::ofstream(s.local, std::ios::binary) << "the version of last month\n";
  FileSpec spec = s.spec;
  spec.replace_if_different = true;
  s.server.answer(kPath, 503);
  expect_error_naming([&] { download_file(spec, quick()); }, {s.spec.url, "HTTP 503"});
  EXPECT_EQ(read_text(s.local), "the version of last month\n");

  s.server.answer(kPath, 0);
  download_file(spec, quick());
  EXPECT_EQ(read_text(s.local), s.bytes);
}

// A verified .part holds no open file until its commit, which renames it only if it is still the
// file that was checked (not one another process put there by the same name since).
TEST(HostileServer, AVerifiedPartReplacedBeforeItsCommitIsNotRenamed) {
  Served s;
  DownloadResult result;
  std::optional<VerifiedPart> part = fetch_part(s.spec, quick(), &result);
  ASSERT_TRUE(part.has_value());
  const std::string path = download_part_path(s.spec.path);
  fs::remove(path);
  std::ofstream(path, std::ios::binary) << std::string(s.bytes.size(), 'y');
  expect_error_naming([&] { part->commit(); }, {path, "changed after it was checked"});
  EXPECT_FALSE(fs::exists(s.local));
}

}  // namespace
}  // namespace minrnn::fetch
