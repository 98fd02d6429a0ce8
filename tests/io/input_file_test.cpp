#include "io/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tests/temp_dir.h"

namespace minrnn::io {
namespace {

namespace fs = std::filesystem;

// The message read_input_file throws for `path`, or "read" where it reads.
std::string refusal(const std::string& path) {
  try {
    read_input_file(path, "config file");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "read";
}

class InputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir / "sub");
    std::ofstream(dir / "hopper-medium-mingru.yaml") << "backbone: mingru\n";
  }
  testing::TempDir temp;
  const fs::path dir = temp.path;
};

TEST_F(InputFile, ReadsTheText) {
  EXPECT_EQ(read_input_file((dir / "hopper-medium-mingru.yaml").string(), "config file"),
            "backbone: mingru\n");
}

// A .yml for a .yaml, a typo: the file beside it is offered, with its folder.
TEST_F(InputFile, AMissingFileOffersTheNameBesideItMostLikelyMeant) {
  const std::string yml = (dir / "hopper-medium-mingru.yml").string();
  EXPECT_EQ(refusal(yml), yml + ": no such config file (did you mean '" +
                              (dir / "hopper-medium-mingru.yaml").string() + "'?)");
  const std::string far = (dir / "walker2d.yaml").string();
  EXPECT_EQ(refusal(far), far + ": no such config file");
  const std::string no_dir = (dir / "nowhere" / "x.yaml").string();
  EXPECT_EQ(refusal(no_dir), no_dir + ": no such config file");
}

// A run directory mistyped: its folder's entries, directories too.
TEST_F(InputFile, ANearbyNameMayBeADirectory) {
  EXPECT_EQ(nearby_name_hint((dir / "sup").string()),
            " (did you mean '" + (dir / "sub").string() + "'?)");
  EXPECT_EQ(nearby_name_hint((dir / "far-away-name").string()), "");
}

TEST_F(InputFile, ADirectoryIsNotAFile) {
  const std::string sub = (dir / "sub").string();
  EXPECT_EQ(refusal(sub), sub + ": a directory, not a config file");
}

// A FIFO would block the read and /dev/zero never end it: both are refused before reading, as is
// a file larger than its kind can be.
TEST_F(InputFile, OnlyARegularFileOfAPlausibleSizeIsRead) {
  const std::string fifo = (dir / "config.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(refusal(fifo), fifo + ": not a regular file (a config file is read from one)");
  const fs::path zero = dir / "zero.yaml";
  fs::create_symlink("/dev/zero", zero);
  EXPECT_EQ(refusal(zero.string()),
            zero.string() + ": not a regular file (a config file is read from one)");
  const std::string big = (dir / "big.yaml").string();
  std::ofstream(big) << std::string(101, 'x');
  try {
    read_input_file(big, "config file", 100);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), big + ": 101 bytes, more than a config file can be (100)");
  }
  EXPECT_EQ(read_input_file(big, "config file", 101), std::string(101, 'x'));
}

}  // namespace
}  // namespace minrnn::io
