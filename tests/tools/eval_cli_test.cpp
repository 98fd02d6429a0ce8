// `minrnn eval` as an audit of its results and files (2026-11-29) left it: a run's result
// (eval.json) is replaced only by --replace in its own run, whatever --out names; a place the
// output cannot go is refused before any episode runs; the numbers do not depend on the thread
// count; an option's bad value is refused by its name.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/run_command.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"
#include "tests/tools/cli_fixtures.h"

namespace minrnn {
namespace {

using testing::expect_failure_naming;
using testing::read_text;
using testing::run_minrnn;
using testing::TempDir;
using testing::write_text;
namespace fs = std::filesystem;

using testing::kFourStepConfig;

// Two finished runs, a and b, each with its result (eval.json, 2 episodes).
class EvalCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(
        run_minrnn(dir, "data synth d.hdf5 --env hopper --steps 400 --episode-len 50").exit_code,
        0);
    write_text(dir.path / "c.yaml", kFourStepConfig);
    for (const char* run : {"a", "b"}) {
      const std::string args = std::string("train c.yaml --quiet --seed 0 --run-dir ") + run;
      ASSERT_EQ(run_minrnn(dir, args).exit_code, 0);
      ASSERT_EQ(run_minrnn(dir, std::string("eval ") + run + " --episodes 2 --replace").exit_code,
                0);
    }
  }
  nlohmann::json json(const std::string& file) const {
    return nlohmann::json::parse(read_text(dir.path / file));
  }
  TempDir dir;
};

TEST_F(EvalCli, OutNeverReplacesARunsResultNorFailsAfterTheEpisodes) {
  const std::string b_result = read_text(dir.path / "b" / "eval.json");
  expect_failure_naming(run_minrnn(dir, "eval a --episodes 1 --out b/eval.json"),
                        {"--out b/eval.json", "is a run's result", "--replace"});
  EXPECT_EQ(read_text(dir.path / "b" / "eval.json"), b_result);
  // Nor a run's result not written yet: a's episodes would read later as b's score.
  fs::rename(dir.path / "b" / "eval.json", dir.path / "b-eval.json");
  expect_failure_naming(run_minrnn(dir, "eval a --episodes 1 --out b/eval.json"),
                        {"--out b/eval.json", "is a run's result", "minrnn eval "});
  EXPECT_FALSE(fs::exists(dir.path / "b" / "eval.json"));
  // Found after the rollout before: the episodes ran, then nothing was written.
  for (const auto& [where, why] : std::vector<std::pair<std::string, std::string>>{
           {"missing/x.json", "cannot write it: its folder missing does not exist"},
           {"d.hdf5/x.json", "cannot write it: its folder d.hdf5 is a file, not a folder"},
           {"b", "cannot write it: it is a folder"},
           {"/proc/x.json", "cannot write it: its folder /proc "}}) {
    const testing::CommandResult r = run_minrnn(dir, "eval a --episodes 1 --out " + where);
    expect_failure_naming(r, {"--out " + where + ": " + why});
    EXPECT_EQ(r.output.find("episodes ended"), std::string::npos) << r.output;
  }
  // Nor another run's own evaluations (b's 1-episode one, made by `minrnn eval b`), where a's own
  // folder takes one by that name (the demo's eval-video.json).
  ASSERT_EQ(run_minrnn(dir, "eval b --episodes 1").exit_code, 0);
  const std::string b_own = read_text(dir.path / "b" / "eval-episodes1.json");
  expect_failure_naming(run_minrnn(dir, "eval a --episodes 1 --out b/eval-episodes1.json"),
                        {"--out b/eval-episodes1.json: is a name of b's files"});
  EXPECT_EQ(read_text(dir.path / "b" / "eval-episodes1.json"), b_own);
  EXPECT_EQ(run_minrnn(dir, "eval a --episodes 1 --out a/eval-video.json").exit_code, 0);
  expect_failure_naming(run_minrnn(dir, "eval a --episodes 1 --out ''"),
                        {"--out", "expected a file name"});
  // A video folder that cannot be one, before any episode too.
  const testing::CommandResult video = run_minrnn(dir, "eval a --episodes 1 --video c.yaml");
  expect_failure_naming(video, {"--video c.yaml is a file, not a folder"});
  EXPECT_EQ(video.exit_code, 2);
  EXPECT_EQ(video.output.find("episodes ended"), std::string::npos) << video.output;
  // A mode the run's backbone has not: the option named, exit 2 (it said PolicyOptions::mode).
  std::string transformer = kFourStepConfig;
  transformer.replace(transformer.find("mingru"), 6, "transformer");
  write_text(dir.path / "t.yaml", transformer);
  ASSERT_EQ(run_minrnn(dir, "train t.yaml --quiet --run-dir t").exit_code, 0);
  const testing::CommandResult mode =
      run_minrnn(dir, "eval t --episodes 1 --mode streaming --video new");
  expect_failure_naming(mode, {"eval: --mode streaming: eval mode 'streaming' needs a recurrent "
                               "backbone; backbone 'transformer' has no step mode"});
  EXPECT_EQ(mode.exit_code, 2);
  EXPECT_FALSE(fs::exists(dir.path / "new"));  // the video folder is made after every check
  // A config given for a run: one line naming it, where LibTorch's zip reader said a paragraph.
  const testing::CommandResult config = run_minrnn(dir, "eval c.yaml");
  expect_failure_naming(config, {"c.yaml: not a readable minrnn checkpoint: not a zip archive"});
  EXPECT_EQ(config.output.find("miniz"), std::string::npos) << config.output;
}

// A result made with another engine (a GPU sweep's torch engine) is kept from a plain eval, which
// takes the packed one on a CPU; "fast", the packed engine's old name, names the same file.
TEST_F(EvalCli, AResultOfAnotherEngineIsKept) {
  ASSERT_EQ(run_minrnn(dir, "eval a --engine torch --replace").exit_code, 0);
  ASSERT_EQ(json("a/eval.json")["engine"], "torch");
  const testing::CommandResult plain = run_minrnn(dir, "eval a");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(json("a/eval.json")["engine"], "torch");
  EXPECT_EQ(json("a/eval-enginepacked.json")["engine"], "packed") << plain.output;
  ASSERT_EQ(run_minrnn(dir, "eval a --episodes 1 --engine fast").exit_code, 0);
  EXPECT_TRUE(fs::exists(dir.path / "a" / "eval-episodes1-enginepacked.json"));
}

// A result another checkpoint made (b's, or this run's at another step, put there by hand) is not
// this checkpoint's score: kept, and the plain eval's goes beside it under the step (found by a
// walk through the commands, 2026-11-29: it was kept only where a setting of the episodes
// differed).
TEST_F(EvalCli, AResultOfAnotherCheckpointIsKept) {
  nlohmann::json other = json("b/eval.json");
  other["train_step"] = 999;
  write_text(dir.path / "a" / "eval.json", other.dump());
  const testing::CommandResult plain = run_minrnn(dir, "eval a");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_NE(plain.output.find("was made with other settings: kept"), std::string::npos)
      << plain.output;
  EXPECT_EQ(json("a/eval.json")["train_step"], 999);
  const int64_t step = json("a/eval-train_step4-episodes10.json")["train_step"];
  EXPECT_EQ(step, 4) << plain.output;
}

// An extension keeps the finished run's result as eval-step<N>.json; a plain eval of the same
// checkpoint, in flight while the extension began, named its file eval-step<N>.json too and
// replaced it (an audit of concurrent commands, 2026-11-29). Files of other settings are kept.
TEST_F(EvalCli, AKeptResultIsNotReplacedByAnAdHocOne) {
  // What --extend leaves before its first save: the result and done.json kept under the step.
  fs::rename(dir.path / "a" / "done.json", dir.path / "a" / "done-step4.json");
  fs::rename(dir.path / "a" / "eval.json", dir.path / "a" / "eval-step4.json");
  const std::string kept = read_text(dir.path / "a" / "eval-step4.json");
  const testing::CommandResult plain = run_minrnn(dir, "eval a");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(read_text(dir.path / "a" / "eval-step4.json"), kept);
  EXPECT_EQ(json("a/eval-step4-episodes10.json")["episodes"], 10) << plain.output;
}

// A destination without --out that cannot be written was found only once every episode had run,
// and the score computed went with it (a walk, 2026-11-29): now refused before the rollout, as
// --out is; a write that fails after it still prints the score first.
TEST_F(EvalCli, AnUnusableDefaultDestinationIsRefusedBeforeTheEpisodes) {
  fs::remove(dir.path / "a" / "eval.json");
  fs::create_directory(dir.path / "a" / "eval.json");
  fs::create_directory(dir.path / "a" / "eval-episodes1.json");
  for (const auto& [args, file] : std::vector<std::pair<std::string, std::string>>{
           {"eval a", "a/eval.json"}, {"eval a --episodes 1", "a/eval-episodes1.json"}}) {
    const testing::CommandResult r = run_minrnn(dir, args);
    expect_failure_naming(r, {file + ", where this evaluation goes: cannot write it: it is a "
                                     "folder (--out FILE writes it elsewhere)"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.output.find("episodes ended"), std::string::npos) << r.output;
  }
  // A file size limit (a full disk alike) fails the write itself: the score is on stdout first.
  const testing::CommandResult limited =
      testing::run_command("cd '" + dir.path.string() + "' && ulimit -f 0 && OMP_NUM_THREADS=1 '" +
                           testing::minrnn_binary() + "' eval a --episodes 2");
  expect_failure_naming(
      limited, {"over 2 episodes", ": not written", "cannot write", "a/eval-episodes2.json"});
  EXPECT_LT(limited.output.find(": not written"), limited.output.find("cannot write"))
      << limited.output;
  EXPECT_FALSE(fs::exists(dir.path / "a" / "eval-episodes2.json"));
}

// A file under a name eval writes that is no evaluation's JSON (a user's notes) was replaced by a
// plain eval (a walk, 2026-11-29): refused before the rollout, named, --replace or not.
TEST_F(EvalCli, AFileThatIsNoEvaluationIsNeverReplaced) {
  for (const auto& [args, file, text] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"eval a", "a/eval.json", "my notes, not json\n"},
           {"eval a", "a/eval.json", "{\"foo\": 1}\n"},
           {"eval a --replace", "a/eval.json", "my notes\n"},
           {"eval a --episodes 2", "a/eval-episodes2.json", "my own notes\n"}}) {
    write_text(dir.path / file, text);
    const testing::CommandResult r = run_minrnn(dir, args);
    expect_failure_naming(r, {file + ", where this evaluation goes: exists and is not an "
                                     "evaluation's JSON: not replaced"});
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.output.find("episodes ended"), std::string::npos) << r.output;
    EXPECT_EQ(read_text(dir.path / file), text) << args;
  }
}

// A checkpoint of another environment copied into a run became that run's eval.json, which the
// report then averaged into the run's cell (a walk, 2026-11-29): refused, naming both; where the
// file that says the run's environment is damaged, that is said.
TEST_F(EvalCli, ACheckpointOfAnotherEnvironmentIsNotTheRunsResult) {
  fs::remove(dir.path / "a" / "eval.json");
  const fs::path env = dir.path / "a" / "env.json";
  const std::string recorded = read_text(env);
  nlohmann::json walker = nlohmann::json::parse(recorded);
  walker["env"] = "walker2d";
  write_text(env, walker.dump());
  for (const char* args : {"eval a", "eval a --episodes 1", "eval a --replace"}) {
    const testing::CommandResult r = run_minrnn(dir, args);
    expect_failure_naming(r, {"a/checkpoint.pt runs in Hopper-v4 (env \"hopper\"), but a/env.json "
                              "says this run is evaluated in Walker2d-v4 (env \"walker2d\")",
                              "nothing is written in a", "--out FILE"});
    EXPECT_EQ(r.output.find("episodes ended"), std::string::npos) << r.output;
  }
  EXPECT_FALSE(fs::exists(dir.path / "a" / "eval.json"));
  EXPECT_FALSE(fs::exists(dir.path / "a" / "eval-episodes1.json"));
  // Evaluated elsewhere, it is the user's file: the JSON names the environment.
  EXPECT_EQ(run_minrnn(dir, "eval a --episodes 1 --out x.json").exit_code, 0);
  write_text(env, "garbage");
  expect_failure_naming(run_minrnn(dir, "eval a"),
                        {"a/env.json: not a JSON object with the run's \"env\" (a damaged file?)"});
  // A run without env.json: config.yaml's env key against the checkpoint's.
  fs::remove(env);
  const std::string config = read_text(dir.path / "a" / "config.yaml");
  std::string other = config;
  other.replace(other.find("env: hopper"), 11, "env: walker2d");
  write_text(dir.path / "a" / "config.yaml", other);
  expect_failure_naming(run_minrnn(dir, "eval a"),
                        {"a/checkpoint.pt was trained with env \"hopper\", but a/config.yaml says "
                         "env \"walker2d\""});
  write_text(dir.path / "a" / "config.yaml", "{");
  expect_failure_naming(run_minrnn(dir, "eval a"), {"a/config.yaml", "a damaged file?"});
  EXPECT_FALSE(fs::exists(dir.path / "a" / "eval.json"));
  write_text(dir.path / "a" / "config.yaml", config);
  write_text(env, recorded);
  EXPECT_EQ(run_minrnn(dir, "eval a --episodes 1").exit_code, 0);
}

// A downloaded checkpoint beside a config.yaml of the user's own (Hydra's) was refused as "a
// damaged file?" (a review, 2026-11-30): no run trained in that folder, so its config is not read.
TEST_F(EvalCli, ABareCheckpointBesideAConfigOfAnotherKindIsEvaluated) {
  fs::create_directories(dir.path / "download");
  fs::copy_file(dir.path / "a" / "checkpoint.pt", dir.path / "download" / "model.pt");
  write_text(dir.path / "download" / "config.yaml", "defaults:\n  - _self_\nlr: 3.0e-4\n");
  const testing::CommandResult r = run_minrnn(dir, "eval download/model.pt --episodes 1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("→ download/eval-model-episodes1.json"), std::string::npos) << r.output;
}

// --out under a name of this run's evaluations named by their settings wrote other settings'
// episodes there (a walk, 2026-11-29: --episodes 1 into eval-episodes2.json): refused unless the
// name is these settings'; a name of the user's own (the demo's eval-video.json) is not one.
TEST_F(EvalCli, OutNamesThisRunsEvaluationsOnlyByTheirSettings) {
  ASSERT_EQ(run_minrnn(dir, "eval a --episodes 2").exit_code, 0);
  const std::string two = read_text(dir.path / "a" / "eval-episodes2.json");
  for (const char* name : {"eval-episodes2.json", "eval-episodes2-modewindow.json",
                           "eval-step4.json", "eval-enginetorch.json"}) {
    const testing::CommandResult r =
        run_minrnn(dir, std::string("eval a --episodes 1 --out a/") + name);
    expect_failure_naming(r, {std::string("--out a/") + name +
                              ": is the name of this run's evaluation with the settings it "
                              "says, and these settings' is eval-episodes1.json"});
    EXPECT_EQ(r.exit_code, 2);
  }
  EXPECT_EQ(read_text(dir.path / "a" / "eval-episodes2.json"), two);
  EXPECT_EQ(run_minrnn(dir, "eval a --episodes 1 --out a/eval-episodes1.json").exit_code, 0);
  EXPECT_EQ(json("a/eval-episodes1.json")["episodes"], 1);
  // A user's own names that begin as a part does, without its value, are theirs.
  for (const char* own : {"eval-streaming.json", "eval-mode-comparison.json", "eval-engine.json"})
    EXPECT_EQ(run_minrnn(dir, std::string("eval a --episodes 1 --out a/") + own).exit_code, 0)
        << own;
}

// --target-return's default is the checkpoint's config's: an edited config.yaml changes nothing,
// and --help says so (it said "config's", a walk, 2026-11-30).
TEST_F(EvalCli, TheTargetReturnIsTheCheckpointsConfigsUnlessGiven) {
  std::string config = read_text(dir.path / "a" / "config.yaml");
  const size_t at = config.find("target_return: ");
  ASSERT_NE(at, std::string::npos) << config;
  config.replace(at, config.find('\n', at) - at, "target_return: 1000");
  write_text(dir.path / "a" / "config.yaml", config);
  ASSERT_EQ(run_minrnn(dir, "eval a --episodes 2 --out t.json").exit_code, 0);
  EXPECT_EQ(json("t.json")["target_return"], json("a/eval.json")["target_return"]);
  EXPECT_NE(json("t.json")["target_return"], 1000.0);
  testing::expect_output_naming(run_minrnn(dir, "eval --help"),
                                {"stored in the checkpoint", "config.yaml is not read"});
}

TEST_F(EvalCli, TheThreadCountLeavesTheNumbersAsTheyAre) {
  for (const char* threads : {"1", "2", "3"}) {
    const std::string out = std::string("t") + threads + ".json";
    ASSERT_EQ(
        run_minrnn(dir, "eval a --episodes 20 --threads " + std::string(threads) + " --out " + out)
            .exit_code,
        0);
    EXPECT_EQ(json(out)["threads"], std::stoi(threads));
    EXPECT_EQ(json(out)["returns"], json("t1.json")["returns"]) << threads << " threads";
  }
  expect_failure_naming(run_minrnn(dir, "eval a --episodes 0"),
                        {"--episodes", "expected an integer from 1 to 1000000, got '0'"});
  expect_failure_naming(run_minrnn(dir, "eval a --episodes 2147483647"),
                        {"--episodes", "got '2147483647'"});
}

}  // namespace
}  // namespace minrnn
