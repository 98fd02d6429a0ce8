// Files committed together: all or none, for real. A later file's rename is made to fail by
// removing its temp before the commit (ENOENT), as a cleaner or a user would; the other real
// failures (an immutable file: EPERM, a mount point: EBUSY) need root, and a folder in a file's
// place is refused before any rename.
#include "io/atomic_files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn::io {
namespace {

namespace fs = std::filesystem;
using minrnn::testing::read_text;
using minrnn::testing::write_text;

// Temps for `names` under `dir`, each holding "new <name>".
std::vector<std::unique_ptr<AtomicFile>> written(const fs::path& dir,
                                                 const std::vector<std::string>& names) {
  std::vector<std::unique_ptr<AtomicFile>> files;
  for (const std::string& name : names) {
    files.push_back(std::make_unique<AtomicFile>((dir / name).string()));
    files.back()->write("new " + name);
  }
  return files;
}

std::vector<AtomicFile*> pointers(const std::vector<std::unique_ptr<AtomicFile>>& files) {
  std::vector<AtomicFile*> all;
  for (const auto& f : files) all.push_back(f.get());
  return all;
}

// The folder's entries, sorted: nothing left beside the files (no .tmp, no kept copy).
std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AtomicFiles, CommitsAllAndLeavesNothingBeside) {
  minrnn::testing::TempDir tmp;
  write_text(tmp.path / "a.md", "old a.md");
  write_text(kept_name((tmp.path / "b.csv").string()), "left by a commit that was killed");
  write_text(tmp.path / "a.md.old", "the user's own backup");
  write_text(tmp.path / "b.csv", "old b.csv");
  auto files = written(tmp.path, {"a.md", "b.csv", "c.json"});
  commit_all_or_none(pointers(files));
  EXPECT_EQ(read_text(tmp.path / "a.md"), "new a.md");
  EXPECT_EQ(read_text(tmp.path / "b.csv"), "new b.csv");
  EXPECT_EQ(read_text(tmp.path / "c.json"), "new c.json");
  EXPECT_EQ(entries(tmp.path), (std::vector<std::string>{"a.md", "a.md.old", "b.csv", "c.json"}));
  EXPECT_EQ(read_text(tmp.path / "a.md.old"), "the user's own backup");
  EXPECT_EQ(kept_name("sweep/table3.md"), "sweep/.table3.md.minrnn-kept");
}

TEST(AtomicFiles, AFolderInALaterFilesPlaceIsRefusedBeforeAnyRename) {
  minrnn::testing::TempDir tmp;
  write_text(tmp.path / "a.md", "old a.md");
  fs::create_directories(tmp.path / "c.json");
  auto files = written(tmp.path, {"a.md", "b.csv", "c.json"});
  try {
    commit_all_or_none(pointers(files));
    FAIL() << "committed over a folder";
  } catch (const WriteError& e) {
    const std::string said = e.what();
    EXPECT_NE(said.find((tmp.path / "c.json").string() + ": it is a folder"), std::string::npos)
        << said;
    EXPECT_NE(said.find("b.csv and " + (tmp.path / "c.json").string() + " are unchanged"),
              std::string::npos)
        << said;
  }
  files.clear();  // the temps go
  EXPECT_EQ(read_text(tmp.path / "a.md"), "old a.md");
  EXPECT_EQ(entries(tmp.path), (std::vector<std::string>{"a.md", "c.json"}));
}

// The walk's case (2026-11-30): table3.json's rename failed after table3.md's and table3.csv's,
// which stayed replaced. Now the earlier ones are put back, a new one removed.
TEST(AtomicFiles, ALaterRenameThatFailsPutsTheEarlierFilesBack) {
  minrnn::testing::TempDir tmp;
  write_text(tmp.path / "a.md", "old a.md");
  write_text(tmp.path / "c.json", "old c.json");
  auto files = written(tmp.path, {"a.md", "b.csv", "c.json"});
  fs::remove(files[2]->tmp_path());  // c.json's rename fails: ENOENT
  try {
    commit_all_or_none(pointers(files));
    FAIL() << "committed without c.json's temp";
  } catch (const WriteError& e) {
    const std::string said = e.what();
    EXPECT_NE(said.find("cannot write " + (tmp.path / "c.json").string()), std::string::npos)
        << said;
    EXPECT_NE(said.find("No such file or directory"), std::string::npos) << said;
    EXPECT_NE(said.find((tmp.path / "a.md").string() + " and " + (tmp.path / "b.csv").string() +
                        " were put back as before"),
              std::string::npos)
        << said;
  }
  files.clear();
  EXPECT_EQ(read_text(tmp.path / "a.md"), "old a.md");
  EXPECT_EQ(read_text(tmp.path / "c.json"), "old c.json");
  EXPECT_EQ(entries(tmp.path), (std::vector<std::string>{"a.md", "c.json"}));  // b.csv was new
}

}  // namespace
}  // namespace minrnn::io
