// io::AtomicDir: a directory replaced whole or not at all.
#include "io/atomic_dir.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}
using minrnn::testing::read_text;

TEST(AtomicDir, ReplacesTheDirectoryWholeAndLeavesNoSibling) {
  TempDir dir;
  const fs::path d = dir.path / "set";
  fs::create_directories(d);
  write(d / "old.txt", "old");
  {
    io::AtomicDir out(d.string());
    write(out.staging() / "new.txt", "new");
    EXPECT_EQ(read_text(d / "old.txt"), "old");  // untouched until commit
    out.commit();
  }
  EXPECT_EQ(read_text(d / "new.txt"), "new");
  EXPECT_FALSE(fs::exists(d / "old.txt"));
  EXPECT_FALSE(fs::exists(dir.path / "set.tmp"));
  EXPECT_FALSE(fs::exists(dir.path / "set.old"));
}

// "set/" is "set": its staging directory is a sibling, not a child it would rename into itself.
TEST(AtomicDir, ATrailingSlashNamesTheSameDirectory) {
  TempDir dir;
  const std::string with_slash = (dir.path / "set").string() + "/";
  for (int round = 0; round < 2; ++round) {  // create, then replace
    io::AtomicDir out(with_slash);
    EXPECT_EQ(out.path(), dir.path / "set");
    EXPECT_EQ(out.staging(), dir.path / "set.tmp");
    write(out.staging() / "f.txt", std::to_string(round));
    out.commit();
  }
  EXPECT_EQ(read_text(dir.path / "set" / "f.txt"), "1");
  EXPECT_FALSE(fs::exists(dir.path / "set.tmp"));
}

TEST(AtomicDir, AnUncommittedDirectoryLeavesNothingAndKeepsTheOldOne) {
  TempDir dir;
  fs::create_directories(dir.path / "set");
  write(dir.path / "set" / "f.txt", "old");
  {
    io::AtomicDir out((dir.path / "set").string());
    write(out.staging() / "f.txt", "half");
  }
  EXPECT_EQ(read_text(dir.path / "set" / "f.txt"), "old");
  EXPECT_FALSE(fs::exists(dir.path / "set.tmp"));
}

// A kill between commit's two renames leaves the old directory at <dir>.old and none at <dir>:
// the next writer of <dir> puts it back before anything else.
TEST(AtomicDir, AnOldDirectoryLeftByAKillMidCommitIsPutBack) {
  TempDir dir;
  fs::create_directories(dir.path / "set.old");
  write(dir.path / "set.old" / "f.txt", "old");
  {
    io::AtomicDir out((dir.path / "set").string());
    EXPECT_EQ(read_text(dir.path / "set" / "f.txt"), "old");
    EXPECT_FALSE(fs::exists(dir.path / "set.old"));
  }
  EXPECT_EQ(read_text(dir.path / "set" / "f.txt"), "old");
}

}  // namespace
}  // namespace minrnn
