// Sweep files: strict validation, run planning, resume (finished runs are skipped) and one real
// two-run sweep through child processes of the minrnn binary.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ops/device.h"
#include "rl/trainer.h"
#include "sweep/local_pool.h"
#include "sweep/sweep.h"
#include "tests/paths.h"
#include "tests/rl/fixtures.h"
#include "tests/run_command.h"
#include "tests/scoped_env.h"
#include "tests/sweep/sweep_fixtures.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

// A typo in a shipped sweep (a key, a config name, an override) must fail here, not hours into
// somebody's run: each one loads and every run's config accepts its overrides.
TEST(SweepFile, EveryShippedSweepPlans) {
  int files = 0;
  for (const auto& entry :
       fs::directory_iterator(fs::path(minrnn::testing::source_dir()) / "configs/sweeps")) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    SCOPED_TRACE(entry.path().string());
    const sweep::SweepSpec spec = sweep::load_sweep(entry.path().string());
    std::vector<sweep::SweepRun> runs;
    ASSERT_NO_THROW(runs = sweep::plan_sweep(spec));
    EXPECT_EQ(runs.size(), spec.datasets.size() * spec.backbones.size() * spec.seeds.size());
  }
  EXPECT_GE(files, 4);
}

TEST(SweepFile, ParsesEveryKey) {
  const auto s = sweep::parse_sweep(
      "datasets: [a, b]\nbackbones: [mingru]\nseeds: [0, 3]\nconfig: x/{dataset}.yaml\n"
      "set: [max_steps=5]\nout: o\nparallel: 3\nthreads: 2\neval_episodes: 4\npack: 5\n",
      "s.yaml");
  EXPECT_EQ(s.datasets, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(s.seeds, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(s.config_template, "x/{dataset}.yaml");
  EXPECT_EQ(s.out, "o");
  EXPECT_EQ(s.parallel, 3);
  EXPECT_EQ(s.threads, 2);
  EXPECT_EQ(s.eval_episodes, 4);
  EXPECT_EQ(s.pack, 5);
  EXPECT_EQ(sweep::parse_sweep("datasets: [a]\nbackbones: [hgrn]\nseeds: [1]\n", "dir/t.yaml").out,
            "runs/sweeps/t");
}

// `pack: auto` (the default): every seed of a dataset × backbone in one process on CUDA (up to
// kAutoGpuPack), one run per process on the CPU; a number is taken as it is, on any device.
// A pack takes the seeds of its first run's config first, then, while there is room, runs of
// other configs that pass the same overrides and train on the same device in the same precision;
// the command line names one config per run only where they differ.
TEST(SweepPlan, PacksFillWithOtherConfigsThatCanShareTheProcess) {
  const testing::ScopedEnv streams("MINRNN_STACKED_PACK", "0");  // a stream a run
  auto run = [](const std::string& config, int64_t seed, const std::string& precision = "fp32",
                const std::string& device = "cuda") {
    sweep::SweepRun r;
    r.config = config;
    r.seed = seed;
    r.run_dir = "out/" + config + "/seed" + std::to_string(seed);
    r.device = device;
    r.matmul_precision = precision;
    r.overrides = {"max_steps=9"};
    return r;
  };
  std::vector<sweep::SweepRun> runs = {run("a.yaml", 0),         run("b.yaml", 0),
                                       run("a.yaml", 1),         run("b.yaml", 1),
                                       run("c.yaml", 0, "tf32"), run("d.yaml", 0, "fp32", "cpu")};
  runs.push_back(run("e.yaml", 0));
  runs.back().overrides.push_back("lr=1");
  runs.push_back(run("a.yaml", 2));
  runs.back().extend = true;
  sweep::SweepSpec spec;
  spec.pack = 4;
  const std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(sweep::group_packs(spec, runs, all),
            (std::vector<std::vector<int>>{{0, 2, 1, 3}, {4}, {5}, {6}, {7}}));
  spec.pack = 3;
  EXPECT_EQ(sweep::group_packs(spec, runs, all),
            (std::vector<std::vector<int>>{{0, 2, 1}, {3}, {4}, {5}, {6}, {7}}));

  const auto same = [](const std::string& p) { return p; };
  EXPECT_EQ(sweep::pack_train_args(runs, {0, 2}, same),
            (std::vector<std::string>{"train", "a.yaml", "--seed", "0", "--run-dir",
                                      "out/a.yaml/seed0", "--seed", "1", "--run-dir",
                                      "out/a.yaml/seed1", "--quiet", "--set", "max_steps=9"}));
  EXPECT_EQ(sweep::pack_train_args(runs, {0, 1}, [](const std::string& p) { return "/x/" + p; }),
            (std::vector<std::string>{"train", "/x/a.yaml", "/x/b.yaml", "--seed", "0", "--run-dir",
                                      "/x/out/a.yaml/seed0", "--seed", "0", "--run-dir",
                                      "/x/out/b.yaml/seed0", "--quiet", "--set", "max_steps=9"}));
  EXPECT_EQ(sweep::pack_train_args(runs, {7}, same).back(), "--extend");
}

TEST(SweepFile, PackIsAutoByDefaultAndAutoPacksOnlyOnCuda) {
  const std::string ok = "datasets: [a]\nbackbones: [mingru]\nseeds: [0]\n";
  const sweep::SweepSpec by_default = sweep::parse_sweep(ok, "s.yaml");
  EXPECT_EQ(by_default.pack, 0);
  EXPECT_EQ(sweep::parse_sweep(ok + "pack: auto\n", "s.yaml").pack, 0);
  EXPECT_EQ(sweep::pack_limit(by_default, "cpu"), 1);
  EXPECT_EQ(sweep::pack_limit(by_default, "cuda"), sweep::kAutoGpuPack);
  EXPECT_EQ(sweep::pack_limit(by_default, "cuda:1"), sweep::kAutoGpuPack);
  const bool gpu_here = core::cuda_unavailable_reason().empty();
  EXPECT_EQ(sweep::pack_limit(by_default, "auto"), gpu_here ? sweep::kAutoGpuPack : 1);
  const sweep::SweepSpec three = sweep::parse_sweep(ok + "pack: 3\n", "s.yaml");
  EXPECT_EQ(sweep::pack_limit(three, "cpu"), 3);
  EXPECT_EQ(sweep::pack_limit(three, "cuda"), 3);
  const std::string err = testing::sweep_error_of(ok + "pack: many\n");
  EXPECT_NE(err.find("'pack'"), std::string::npos) << err;
  EXPECT_NE(err.find("auto or a positive integer"), std::string::npos) << err;
  EXPECT_NE(testing::sweep_error_of(ok + "pack: 0\n").find("'pack'"), std::string::npos);
}

TEST(SweepFile, ErrorsNameTheKeyAndTheFile) {
  const std::string ok = "datasets: [a]\nbackbones: [mingru]\nseeds: [0]\n";
  auto expect = [](const std::string& err, const std::string& key) {
    EXPECT_NE(err.find("my_sweep.yaml"), std::string::npos) << err;
    EXPECT_NE(err.find("'" + key + "'"), std::string::npos) << err;
  };
  expect(testing::sweep_error_of(ok + "paralel: 2\n"), "paralel");
  EXPECT_NE(testing::sweep_error_of("datasets: [a]\nbackbones: [mingur]\nseeds: [0]\n")
                .find("'backbones': unknown backbone 'mingur' (did you mean 'mingru'?)"),
            std::string::npos);
  EXPECT_NE(testing::sweep_error_of(ok + "paralel: 2\n").find("(did you mean 'parallel'?)"),
            std::string::npos);
  expect(testing::sweep_error_of(ok + "parallel: two\n"), "parallel");
  expect(testing::sweep_error_of(ok + "parallel: 0\n"), "parallel");
  expect(testing::sweep_error_of(ok + "out: [x]\n"), "out");
  expect(testing::sweep_error_of(ok + "set: [no_equals_sign]\n"), "set");
  // Read when the file is, not at its first run's config: a key of no config, a value of no type.
  EXPECT_NE(testing::sweep_error_of(ok + "set: [lrr=1]\n")
                .find("key 'set': 'lrr=1': unknown key (did you mean 'lr'?)"),
            std::string::npos);
  // A cell's own value ({dataset}, {backbone}) is read as each run's will be: filled in.
  EXPECT_EQ(testing::sweep_error_of(ok + "set: [\"dataset=data/{dataset}.hdf5\"]\n"), "");
  EXPECT_NE(testing::sweep_error_of(ok + "set: [\"dataset=data/{datset}.hdf5\"]\n")
                .find("'dataset=data/{datset}.hdf5': unknown placeholder {datset} (a sweep fills "
                      "in {dataset} and {backbone})"),
            std::string::npos);
  EXPECT_EQ(testing::sweep_error_of("datasets: ['1000', '2000']\nbackbones: [mingru]\nseeds: [0]\n"
                                    "set: ['max_steps={dataset}']\n"),
            "");
  EXPECT_NE(testing::sweep_error_of("datasets: ['1000', 'many']\nbackbones: [mingru]\nseeds: [0]\n"
                                    "set: ['max_steps={dataset}']\n")
                .find("'max_steps={dataset}': expected an integer, got 'many' (filled in for "
                      "many, mingru)"),
            std::string::npos);
  EXPECT_NE(testing::sweep_error_of(ok + "set: [max_steps=many]\n")
                .find("'max_steps=many': expected an integer, got 'many'"),
            std::string::npos);
  expect(testing::sweep_error_of("datasets: a\nbackbones: [mingru]\nseeds: [0]\n"), "datasets");
  expect(testing::sweep_error_of("datasets: [a]\nbackbones: [mingru]\nseeds: [zero]\n"), "seeds");
  expect(testing::sweep_error_of("datasets: [a]\nbackbones: [mingru]\n"), "seeds");
  EXPECT_NE(testing::sweep_error_of("[1, 2]").find("my_sweep.yaml"), std::string::npos);
  EXPECT_EQ(testing::sweep_error_of(ok), "");
}

TEST(SweepPlan, BadConfigOrOverrideFailsBeforeAnyRun) {
  testing::TempDir tmp;
  sweep::SweepSpec s = sweep::parse_sweep(
      "datasets: [d]\nbackbones: [mingru]\nseeds: [0]\nconfig: missing-{dataset}.yaml\n",
      (tmp.path / "s.yaml").string());
  EXPECT_THROW(sweep::plan_sweep(s), std::invalid_argument);
  s.config_template = testing::kTinyConfig;
  s.sets = {"no_such_key=1"};
  try {
    sweep::plan_sweep(s);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_key"), std::string::npos) << e.what();
  }
}

// The sweep sets each run's backbone, seed and (through its label) dataset: an override of one in
// `set` or --set would train every run with one value under its own label.
TEST(SweepPlan, AnOverrideOfWhatTheSweepSetsPerRunIsRefused) {
  testing::TempDir tmp;
  sweep::SweepSpec s =
      sweep::parse_sweep("datasets: [a, b]\nbackbones: [mingru]\nseeds: [0]\n", "s.yaml");
  s.config_template = testing::kTinyConfig;
  s.out = (tmp.path / "out").string();
  auto refused = [&](const std::string& set, const std::string& named) {
    s.sets = {"max_steps=5", set};
    try {
      sweep::plan_sweep(s);
      ADD_FAILURE() << set << " was taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("'" + set + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
  };
  refused("backbone=minlstm", "`backbones`");
  refused("seed=3", "`seeds`");
  refused("dataset=x.hdf5", "{dataset}");  // two labels, one dataset
  // A dataset per label, or one label given its file (configs/sweeps/tiny.yaml's --set), is fine.
  s.sets = {"dataset=data/{dataset}.hdf5"};
  EXPECT_EQ(sweep::plan_sweep(s)[1].dataset_source, "data/b.hdf5");
  s.datasets = {"a"};
  s.sets = {"dataset=x.hdf5"};
  EXPECT_EQ(sweep::plan_sweep(s)[0].dataset_source, "x.hdf5");
}

TEST(SweepPlan, FinishedRunsAreSkippedAndTrainedOnesOnlyEvaluated) {
  testing::TempDir tmp;
  sweep::SweepSpec s =
      sweep::parse_sweep("datasets: [d]\nbackbones: [mingru, minlstm]\nseeds: [0, 1]\n", "s.yaml");
  s.config_template = testing::kTinyConfig;
  s.out = (tmp.path / "out").string();
  const fs::path done = tmp.path / "out/d/mingru/seed0", trained = tmp.path / "out/d/minlstm/seed1";
  fs::create_directories(done);
  fs::create_directories(trained);
  testing::write_run_config(done, {"backbone=mingru", "seed=0"});
  testing::write_run_config(trained, {"backbone=minlstm", "seed=1"});
  for (const auto& f : {done / "done.json", trained / "done.json"}) std::ofstream(f) << "{}\n";
  testing::write_eval_json(done);
  const auto runs = sweep::plan_sweep(s);
  ASSERT_EQ(runs.size(), 4u);
  int n_done = 0;
  for (const auto& r : runs) {
    // The tiny config names mingru: only the minlstm runs need it overridden, and first.
    if (r.backbone == "mingru") {
      EXPECT_TRUE(r.overrides.empty()) << r.overrides.front();
    } else {
      EXPECT_EQ(r.overrides, std::vector<std::string>{"backbone=minlstm"});
    }
    const auto dir = fs::path(r.run_dir);
    if (dir == done)
      EXPECT_EQ(r.state, sweep::RunState::kDone);
    else if (dir == trained)
      EXPECT_EQ(r.state, sweep::RunState::kTrained);
    else
      EXPECT_EQ(r.state, sweep::RunState::kPending);
    n_done += r.state == sweep::RunState::kDone;
  }
  EXPECT_EQ(n_done, 1);

  // Everything finished: nothing is started (a bogus binary would make every start fail).
  s.backbones = {"mingru"};
  s.seeds = {0};
  sweep::SweepOptions opt;
  opt.exe = "/nonexistent/minrnn";
  EXPECT_EQ(sweep::run_sweep(s, opt), 0);
  std::ifstream in(fs::path(s.out) / "sweep_status.json");
  const auto status = nlohmann::json::parse(in);
  EXPECT_EQ(status["done"], 1);
  EXPECT_EQ(status["total"], 1);
}

TEST(SweepRun, TwoRunsInParallelThenResumeSkipsThem) {
  const std::string exe = testing::minrnn_binary();
  if (!fs::exists(exe)) GTEST_SKIP() << "build the minrnn target first (" << exe << ")";
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  sweep::SweepSpec s = sweep::parse_sweep(
      "datasets: [hop]\nbackbones: [mingru, minlstm]\nseeds: [0]\nparallel: 2\neval_episodes: 1\n",
      "s.yaml");
  s.config_template = testing::kTinyConfig;
  s.sets = {"dataset=" + data, "max_steps=6", "checkpoint_every=3", "log_every=3"};
  s.out = (tmp.path / "out").string();
  sweep::SweepOptions opt;
  opt.exe = exe;
  opt.progress_every_s = 0;  // a line at every poll while the runs train
  ::testing::internal::CaptureStdout();
  const int failed = sweep::run_sweep(s, opt);
  const std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(failed, 0) << out;
  EXPECT_NE(out.find("[0/2 done] training: hop/"), std::string::npos) << out;
  // Each training run is "starting" until its first metrics row, then "step/max (rate, ETA)".
  EXPECT_TRUE(out.find("/seed0 starting") != std::string::npos ||
              out.find("/6 (") != std::string::npos)
      << out;
  EXPECT_NE(out.find("[2/2 done] hop/"), std::string::npos) << out;
  // The first finish already knows a training rate and an evaluation's time: its ETA is a time.
  const size_t first_done = out.find("[1/2 done] hop/");
  ASSERT_NE(first_done, std::string::npos) << out;
  const std::string line = out.substr(first_done, out.find('\n', first_done) - first_done);
  const size_t eta = line.find("ETA ");
  ASSERT_NE(eta, std::string::npos) << line;
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(line[eta + 4]))) << line;
  for (const char* b : {"mingru", "minlstm"}) {
    const fs::path run = fs::path(s.out) / "hop" / b / "seed0";
    EXPECT_TRUE(fs::exists(run / "done.json")) << run;
    EXPECT_TRUE(fs::exists(run / "train.log")) << run;
    std::ifstream in(run / "eval.json");
    EXPECT_EQ(nlohmann::json::parse(in)["backbone"], b);
  }
  // Re-running starts nothing: the bogus binary would fail any run it started.
  opt.exe = "/nonexistent/minrnn";
  EXPECT_EQ(sweep::run_sweep(s, opt), 0);
  // A removed eval.json is re-made by evaluating only (the bogus binary makes that fail: 1 run).
  fs::remove(fs::path(s.out) / "hop/mingru/seed0/eval.json");
  EXPECT_EQ(sweep::run_sweep(s, opt), 1);
}

// Runs `s` through minrnn child processes, its progress lines kept out of the test's output.
void sweep_quietly(const sweep::SweepSpec& s) {
  sweep::SweepOptions opt;
  opt.exe = testing::minrnn_binary();
  ::testing::internal::CaptureStdout();
  const int failed = sweep::run_sweep(s, opt);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(failed, 0) << printed;
}

// A run trained in a pack against the same run trained alone: the same weights and result.
void expect_trained_alike(const fs::path& packed, const fs::path& alone) {
  ASSERT_TRUE(fs::exists(packed / "eval.json"));
  const rl::Agent a = rl::load_agent(packed.string()), b = rl::load_agent(alone.string());
  EXPECT_EQ(a.config.backbone, b.config.backbone);
  auto pb = b.model->named_parameters();
  for (const auto& p : a.model->named_parameters())
    EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
  std::ifstream ea(packed / "eval.json"), eb(alone / "eval.json");
  EXPECT_EQ(nlohmann::json::parse(ea)["mean_normalized"],
            nlohmann::json::parse(eb)["mean_normalized"]);
}

// `pack: 3`: the three seeds of one dataset × backbone train in one `minrnn train` process, and
// each ends with the weights, curves and result it gets in a sweep that trains them one by one.
TEST(SweepRun, APackTrainsItsSeedsInOneProcessAsTheyTrainAlone) {
  if (!fs::exists(testing::minrnn_binary())) GTEST_SKIP() << "build the minrnn target first";
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  for (const int pack : {3, 1}) {
    sweep::SweepSpec s = sweep::parse_sweep(
        "datasets: [hop]\nbackbones: [mingru]\nseeds: [0, 1, 2]\neval_episodes: 1\n", "s.yaml");
    s.config_template = testing::kTinyConfig;
    s.sets = {"dataset=" + data, "max_steps=6", "checkpoint_every=3", "log_every=3"};
    s.out = (tmp.path / (pack > 1 ? "packed" : "alone")).string();
    s.pack = pack;
    sweep_quietly(s);
  }
  const std::string first_log = testing::read_text(tmp.path / "packed/hop/mingru/seed0/train.log");
  EXPECT_NE(first_log.find("--seed 0 --run-dir"), std::string::npos) << first_log;
  EXPECT_NE(first_log.find("--seed 2 --run-dir"), std::string::npos) << first_log;
  for (const std::string seed : {"seed0", "seed1", "seed2"}) {
    SCOPED_TRACE(seed);
    expect_trained_alike(tmp.path / "packed/hop/mingru" / seed,
                         tmp.path / "alone/hop/mingru" / seed);
  }
}

// With a config file per backbone, `pack: 4` trains both backbones' two seeds in one `minrnn
// train` process (on a GPU they then run side by side instead of taking turns), and each run ends
// with the weights and result it gets trained alone.
TEST(SweepRun, APackOfRunsOfDifferentConfigsTrainsEachAsAlone) {
  if (!fs::exists(testing::minrnn_binary())) GTEST_SKIP() << "build the minrnn target first";
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  for (const std::string backbone : {"mingru", "minlstm"}) {
    testing::write_text(tmp.path / ("tiny-" + backbone + ".yaml"),
                        "defaults: " + testing::kTinyConfig + "\nbackbone: " + backbone + "\n");
  }
  for (const int pack : {4, 1}) {
    sweep::SweepSpec s = sweep::parse_sweep(
        "datasets: [hop]\nbackbones: [mingru, minlstm]\nseeds: [0, 1]\neval_episodes: 1\n"
        "config: tiny-{backbone}.yaml\n",
        (tmp.path / "s.yaml").string());
    s.sets = {"dataset=" + data, "max_steps=6", "checkpoint_every=3", "log_every=3"};
    s.out = (tmp.path / (pack > 1 ? "packed" : "alone")).string();
    s.pack = pack;
    for (const auto& r : sweep::plan_sweep(s)) EXPECT_EQ(r.overrides, s.sets) << r.run_dir;
    sweep_quietly(s);
  }
  // One config per run: the first config's seeds first, then the other's.
  const std::string log = testing::read_text(tmp.path / "packed/hop/mingru/seed0/train.log");
  const std::string mingru = (tmp.path / "tiny-mingru.yaml").string(),
                    minlstm = (tmp.path / "tiny-minlstm.yaml").string();
  EXPECT_NE(
      log.find("train " + mingru + " " + mingru + " " + minlstm + " " + minlstm + " --seed 0"),
      std::string::npos)
      << log;
  for (const std::string run : {"mingru/seed0", "mingru/seed1", "minlstm/seed0", "minlstm/seed1"}) {
    SCOPED_TRACE(run);
    expect_trained_alike(tmp.path / "packed/hop" / run, tmp.path / "alone/hop" / run);
    EXPECT_EQ(rl::load_agent((tmp.path / "packed/hop" / run).string()).config.backbone,
              run.substr(0, run.find('/')));
  }
}

// A finished run's line says how long the rest takes: the steps left at the rate trained here,
// then the evaluations left at the mean one's time, `parallel` at once.
}  // namespace
}  // namespace minrnn
