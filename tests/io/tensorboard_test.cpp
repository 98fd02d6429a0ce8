// TensorBoard event files byte for byte: the expected bytes below were produced by TensorBoard's
// own Python code (tensorboard 2.21.0: event_pb2.Event(...).SerializeToString(), and the
// crc32c / masked_crc32c of tensorboard.compat.tensorflow_stub), not by the code under test.
#include "io/tensorboard.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "tests/io/event_files.h"
#include "tests/temp_dir.h"

namespace minrnn {
namespace {

using testing::TempDir;

std::string hex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    out += digits[static_cast<uint8_t>(c) >> 4];
    out += digits[static_cast<uint8_t>(c) & 15];
  }
  return out;
}

TEST(TensorBoardFormat, Crc32cOfKnownVectors) {
  EXPECT_EQ(io::crc32c("123456789"), 0xe3069283u);
  EXPECT_EQ(io::crc32c(""), 0u);
  // RFC 3720 (iSCSI), appendix B.4.
  EXPECT_EQ(io::crc32c(std::string(32, '\0')), 0x8a9136aau);
  EXPECT_EQ(io::crc32c(std::string(32, '\xff')), 0x62a8ab43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending += static_cast<char>(i);
  EXPECT_EQ(io::crc32c(ascending), 0x46dd794eu);
  EXPECT_EQ(io::masked_crc32c("123456789"), 0xc78ab0e5u);
}

TEST(TensorBoardFormat, ARecordIsFramedByteForByte) {
  // length 3 (uint64 LE), its masked CRC, "abc", the data's masked CRC.
  EXPECT_EQ(hex(io::tfrecord("abc")), "0300000000000000b099490e6162636e57f121");
}

TEST(TensorBoardFormat, EventsAreEncodedAsProtobufEncodesThem) {
  EXPECT_EQ(hex(io::file_version_event(1.5)), "09000000000000f83f1a0d627261696e2e4576656e743a32");
  EXPECT_EQ(hex(io::scalars_event(3, 1.0, {{"a", 0.5}})),
            "09000000000000f03f10032a0a0a080a0161150000003f");
  EXPECT_EQ(hex(io::scalars_event(1, 1.0, {{"train/loss", 0.25}, {"b", -2.0}})),
            "09000000000000f03f10012a1d0a110a0a747261696e2f6c6f7373150000803e0a080a016215000000c0");
  EXPECT_EQ(hex(io::session_start_event(300, 2.0)), "09000000000000004010ac023a020801");
  EXPECT_EQ(hex(io::session_start_event(0, 2.0)), "0900000000000000403a020801");
}

TEST(TensorBoardWriter, AFileStartsWithItsVersionAndHoldsEveryRecordWhole) {
  TempDir dir;
  io::EventFileWriter writer(dir.path.string());
  writer.add_scalar("train/loss", 1, 0.75, 100.0);
  writer.add_scalars(2, {{"train/loss", 0.5}, {"train/lr", 1e-4}}, 101.0);
  writer.add_session_start(2, 102.0);

  const auto files = testing::event_files(dir.path);
  ASSERT_EQ(files.size(), 1u);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string name = files[0].filename().string();
  EXPECT_EQ(name.substr(name.size() - std::string(host).size() - 1), "." + std::string(host));
  EXPECT_EQ(files[0].string(), writer.path());

  const auto events = testing::read_event_file(files[0]);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_NEAR(events[0].wall_time, io::wall_time_now(), 60);
  EXPECT_EQ(events[1].step, 1);
  EXPECT_EQ(events[1].wall_time, 100.0);
  EXPECT_EQ(events[1].scalars, (std::vector<std::pair<std::string, float>>{{"train/loss", 0.75f}}));
  EXPECT_EQ(events[2].scalars, (std::vector<std::pair<std::string, float>>{{"train/loss", 0.5f},
                                                                           {"train/lr", 1e-4f}}));
  EXPECT_TRUE(events[3].session_start);
  EXPECT_EQ(events[3].step, 2);
}

// A resume within the same second (or on a node whose clock is behind) must still be read after
// the run it continues: readers take a run's files in the order of their names.
TEST(TensorBoardWriter, EachNewFileSortsAfterTheFilesAlreadyThere) {
  TempDir dir;
  const long long future = static_cast<long long>(io::wall_time_now()) + 1000;
  std::ofstream(dir.path / ("events.out.tfevents." + std::to_string(future) + ".othernode"));
  std::vector<std::string> opened;
  for (int i = 0; i < 3; ++i) opened.push_back(io::EventFileWriter(dir.path.string()).path());
  const auto files = testing::event_files(dir.path);
  ASSERT_EQ(files.size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(files[i + 1].string(), opened[i]);
}

TEST(TensorBoardWriter, AFileThatCannotBeCreatedIsAnErrorNamingIt) {
  TempDir dir;
  try {
    io::EventFileWriter writer((dir.path / "missing").string());
    FAIL() << "no error";
  } catch (const io::WriteError& e) {
    EXPECT_NE(std::string(e.what()).find("missing/events.out.tfevents."), std::string::npos)
        << e.what();
  }
}

// The line a user pastes into a shell names the folder the shell reads back (an audit,
// 2026-11-29: "--logdir sp dir/run" pasted watched "sp").
TEST(TensorBoard, TheWatchLineIsWhatAShellReadsBack) {
  EXPECT_EQ(io::watch_line("runs/a-s0"), "watch it: tensorboard --logdir runs/a-s0");
  EXPECT_EQ(io::watch_line("sp dir/r\xc3\xbcn"),
            "watch it: tensorboard --logdir 'sp dir/r\xc3\xbcn'");
  EXPECT_EQ(io::watch_line("it's"), "watch it: tensorboard --logdir 'it'\\''s'");
}

}  // namespace
}  // namespace minrnn
