// rl::train's device handling: `auto` is recorded in the run's config.yaml as the device it chose,
// and CUDA where none is usable is refused before the run directory exists.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ops/device.h"
#include "rl/trainer.h"
#include "tests/rl/fixtures.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

TEST(TrainDevice, AutoIsRecordedAsTheDeviceItChose) {
  testing::TempDir tmp;
  const std::string data = testing::write_hopper_dataset(tmp.path, 300);
  rl::TrainOptions o;
  o.quiet = true;
  o.run_dir = (tmp.path / "run").string();
  const auto cfg = testing::tiny_config(data, "mingru", {"max_steps=1", "device=auto"});
  ASSERT_EQ(cfg.device, "auto");
  rl::train(cfg, o);
  std::ifstream in(tmp.path / "run" / "config.yaml");
  std::stringstream yaml;
  yaml << in.rdbuf();
  const std::string want = core::resolve_device("auto", "device").name;
  EXPECT_NE(yaml.str().find("device: " + want + "\n"), std::string::npos) << yaml.str();
  // A rerun with `auto` again is the same run (finished), not one "with another config".
  try {
    rl::train(cfg, o);
    FAIL() << "a finished run was retrained";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("finished run"), std::string::npos) << e.what();
  }
}

TEST(TrainDevice, AGpuWhereNoneIsUsableLeavesNoRunDirectory) {
  if (core::cuda_unavailable_reason().empty()) GTEST_SKIP() << "CUDA is usable here";
  testing::TempDir tmp;
  const std::string data = testing::write_hopper_dataset(tmp.path, 300);
  rl::TrainOptions o;
  o.quiet = true;
  o.run_dir = (tmp.path / "run").string();
  try {
    rl::train(testing::tiny_config(data, "mingru", {"max_steps=1", "device=cuda"}), o);
    FAIL() << "trained on a CUDA device that is not there";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("device cuda was asked for"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(tmp.path / "run"));
}

}  // namespace
}  // namespace minrnn
