// A rollout's video (RolloutOptions::video_dir): its folder holds one rollout's frames, and a
// folder of other files is refused before any episode runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "eval/rollout.h"
#include "tests/eval/rollout_fixtures.h"
#include "tests/rl/fixtures.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;
using testing::short_rollout;
using testing::tiny_agent;

// A video folder holds one rollout's frames: a shorter episode's video leaves none of a longer
// one's behind, and a folder of other files is refused before any episode runs.
TEST(Rollout, AVideoReplacesTheFramesOfAnEarlierOne) {
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  auto agent = tiny_agent(tmp.path, data, "mingru", 5);
  auto ro = short_rollout(1, 6, eval::EvalMode::kStreaming);
  ro.video_dir = (tmp.path / "video").string();
  ro.video_width = 32;
  ro.video_height = 24;
  const auto frames = [&] {
    int n = 0;
    for (const auto& e : fs::directory_iterator(ro.video_dir))
      n += e.path().filename().string().rfind("frame_", 0) == 0;
    return n;
  };
  try {
    eval::rollout(agent, ro);
  } catch (const std::exception& e) {
    if (std::string(e.what()).find("no OSMesa") != std::string::npos) GTEST_SKIP() << e.what();
    throw;
  }
  EXPECT_EQ(frames(), 7);  // the reset's and one a step
  ro.max_steps = 3;
  eval::rollout(agent, ro);
  EXPECT_EQ(frames(), 4);
  EXPECT_TRUE(fs::exists(fs::path(ro.video_dir) / "rollout.gif"));
  // A file of another's, or of our names but not written by minrnn (a user's own rollout.gif),
  // is kept: the folder is refused (a walk, 2026-11-30: rollout.gif was judged by its name).
  for (const char* name : {"notes.txt", "rollout.gif"}) {
    const fs::path file = fs::path(ro.video_dir) / name;
    const fs::path kept = tmp.path / "kept";
    if (fs::exists(file)) fs::rename(file, kept);
    std::ofstream(file) << "GIF89a mine\n";
    try {
      eval::rollout(agent, ro);
      ADD_FAILURE() << name << " was replaced";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("holds ") + name +
                                           ", not only an earlier rollout's frames"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(testing::read_text(file), "GIF89a mine\n");
    fs::remove(file);
    if (fs::exists(kept)) fs::rename(kept, file);
  }
  EXPECT_EQ(frames(), 4);
  eval::rollout(agent, ro);  // ours again: replaced
  EXPECT_EQ(frames(), 4);
}

}  // namespace
}  // namespace minrnn
