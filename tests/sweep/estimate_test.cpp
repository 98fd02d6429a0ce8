// `minrnn sweep --estimate`: the benches' CSVs read back, and a sweep's runs left projected from
// them — packs as the sweep groups them, the steps a run has logged left out, every number one
// can check by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <utility>

#include "rl/config.h"
#include "sweep/estimate.h"
#include "sweep/sweep.h"
#include "tests/scoped_env.h"
#include "tests/sweep/sweep_fixtures.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

// The pack CSV's columns as bench pack writes them, and a row for the tiny config's shape
// (embed 32, 2 layers, B 16, K 10) measured at P on `machine`.
const std::string kPackHeader =
    "device,machine,backbone,step,pack,batch,context,embed,layers,expansion,matmul_precision,"
    "rounds,run_steps_per_s,ms_per_run_step,step_gflop,tflops\n";
std::string tiny_pack_row(int pack, double rate, const std::string& machine = "GPU A",
                          const std::string& backbone = "mingru",
                          const std::string& step = "cuda graph") {
  return "cuda:0," + machine + "," + backbone + "," + step + "," + std::to_string(pack) +
         ",16,10,32,2,1,fp32,9," + std::to_string(rate) + ",1,1,1\n";
}
const std::string kEvalHeader =
    "device,machine,env,episodes,steps,embed,layers,context,policy,batching,env_steps_per_s\n";

// Three seeds of the tiny config on CUDA, 1 000 steps each, evaluated every 250 steps (4
// episodes) and at the end (5 episodes), in packs of up to two: a stream a run
// (MINRNN_STACKED_PACK=0) unless a test stacks them.
struct EstimateFixture {
  testing::ScopedEnv streams{"MINRNN_STACKED_PACK", "0"};
  testing::TempDir tmp;
  sweep::SweepSpec spec;
  EstimateFixture() {
    spec = sweep::parse_sweep(
        "datasets: [d]\nbackbones: [mingru]\nseeds: [0, 1, 2]\npack: 2\n"
        "eval_episodes: 5\n",
        tmp.file("s.yaml"));
    spec.config_template = testing::kTinyConfig;
    spec.out = tmp.file("out");
    spec.sets = {"max_steps=1000", "eval_every=250", "eval_episodes=4", "device=cuda"};
  }
  std::string csv(const std::string& name, const std::string& text) const {
    testing::write_text(tmp.path / name, text);
    return tmp.file(name);
  }
  sweep::SweepEstimate estimate(const std::vector<std::string>& files) const {
    return sweep::estimate_sweep(spec, sweep::plan_sweep(spec), sweep::read_measured_rates(files));
  }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(SweepEstimate, PacksCostEachRunStepTheRateOfTheLargestMeasuredPackThatFits) {
  EstimateFixture f;
  // seed 0 has logged 400 steps; seed 1 is done (trained and evaluated).
  fs::create_directories(f.tmp.path / "out/d/mingru/seed0");
  testing::write_text(f.tmp.path / "out/d/mingru/seed0/metrics.csv", "step,loss\n200,1\n400,1\n");
  const fs::path done = f.tmp.path / "out/d/mingru/seed1";
  fs::create_directories(done);
  std::vector<std::string> sets = f.spec.sets;
  sets.insert(sets.end(), {"backbone=mingru", "seed=1"});
  testing::write_run_config(done, sets);
  testing::write_text(done / "done.json", "{}\n");
  testing::write_eval_json(done, 50, 5);  // the sweep's eval_episodes

  // Measured at P 1 and 4: the pack of two (seeds 0 and 2) borrows P 1's rate, which errs long.
  const std::string packs =
      f.csv("pack.csv", kPackHeader + tiny_pack_row(1, 100) + tiny_pack_row(4, 400) +
                            tiny_pack_row(1, 999, "GPU A", "minlstm"));
  const std::string evals =
      f.csv("eval.csv", kEvalHeader +
                            "cpu,CPU B,hopper,4,100,32,2,10,\"mingru, streaming (state carried), "
                            "packed engine\",batched (E at once),50\n" +
                            "cpu,CPU B,hopper,4,100,32,2,10,\"mingru, streaming (state carried), "
                            "torch engine\",batched (E at once),1\n");
  const sweep::SweepEstimate e = f.estimate({packs, evals});
  EXPECT_EQ(e.device_kind, "cuda");
  EXPECT_EQ(e.train_machine, "GPU A");
  EXPECT_EQ(e.eval_machine, "CPU B");
  EXPECT_EQ(e.runs, 3);
  EXPECT_EQ(e.runs_left, 2);
  EXPECT_EQ(e.packs, 1);
  ASSERT_EQ(e.training.size(), 1u);
  const sweep::TrainingLine& t = e.training[0];
  EXPECT_EQ(t.runs, 2);
  EXPECT_EQ(t.pack, 2);
  EXPECT_EQ(t.measured_pack, 1);
  EXPECT_FALSE(t.below_measured);
  EXPECT_EQ(t.run_steps, 600 + 1000);
  EXPECT_DOUBLE_EQ(t.seconds, 1600 / 100.0);
  EXPECT_DOUBLE_EQ(e.train_seconds, 16.0);
  EXPECT_EQ(e.train_unmeasured, 0);
  // Evaluations ahead: seed 0 at 500, 750, 1000 and seed 2 at 250 … 1000 (4 episodes each), then
  // the sweep's 5 episodes for both; tiny's episodes are at most max_ep_len (1 000) steps.
  ASSERT_EQ(e.evaluation.size(), 1u);
  const sweep::EvaluationLine& v = e.evaluation[0];
  EXPECT_EQ(v.episodes, (3 + 4) * 4 + 2 * 5);
  EXPECT_EQ(v.env_steps, v.episodes * 1000);
  EXPECT_EQ(v.policy, "mingru, streaming (state carried), packed engine");
  EXPECT_DOUBLE_EQ(e.eval_seconds, v.env_steps / 50.0);

  const std::string text = sweep::format_estimate(f.spec, e);
  EXPECT_NE(text.find("GPU A"), std::string::npos) << text;
  EXPECT_NE(text.find("| 2 | mingru embed 32, 2 layers, B 16, K 10, fp32 | 2 | 1 | 1600 |"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("Rates not measured"), std::string::npos) << text;
  const nlohmann::json j = sweep::estimate_json(e);
  EXPECT_DOUBLE_EQ(j["train_seconds"].get<double>(), 16.0);
  EXPECT_EQ(j["training"][0]["measured_pack"], 1);
  EXPECT_TRUE(j["missing"].empty());
}

// Where packs stack (MINRNN_STACKED_PACK=1, rl/stacked_pack.h) a pack's runs cost what `bench pack
// --stacked` measured, and else (=0) what the packs of streams did.
TEST(SweepEstimate, StackedPacksAreCostedFromTheStackedBenchWhereAsked) {
  EstimateFixture f;
  const std::string packs =
      f.csv("pack.csv", kPackHeader + tiny_pack_row(2, 100) +
                            tiny_pack_row(2, 300, "GPU A", "mingru", "stacked cuda graph"));
  const std::string evals = f.csv("eval.csv", kEvalHeader);
  const auto seconds = [&] {
    const sweep::SweepEstimate e = f.estimate({packs, evals});
    EXPECT_EQ(e.train_unmeasured, 0);
    return e.train_seconds;
  };
  const double streams = seconds();
  double stacked = 0;
  {
    const testing::ScopedEnv stacking("MINRNN_STACKED_PACK", "1");
    stacked = seconds();
  }
  // 3 000 run-steps: a pack of two at P 2's rate, the third run alone (nothing to stack) at the
  // streams' P 2 rate (the nearest measured).
  EXPECT_DOUBLE_EQ(streams, 2000 / 100.0 + 1000 / 100.0);
  EXPECT_DOUBLE_EQ(stacked, 2000 / 300.0 + 1000 / 100.0);

  // Stacking where only the streams were measured: the bench to run is the stacked one's.
  const testing::ScopedEnv stacking("MINRNN_STACKED_PACK", "1");
  const sweep::SweepEstimate e =
      f.estimate({f.csv("streams.csv", kPackHeader + tiny_pack_row(2, 100)), evals});
  EXPECT_EQ(e.train_unmeasured, 1);
  const std::string text = sweep::format_estimate(f.spec, e);
  EXPECT_NE(text.find("--packs 2 --embed 32 --layers 2 --batch 16 --context 10 --stacked\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fp32, stacked | 2 | none |"), std::string::npos) << text;
}

// Where packs stack (on CUDA by default), a run costs its stacked model's rate at the number
// of runs it stacks: a pack holds one stack shape (group_packs), and a shape's only run is a pack
// of one at the lone rate. A pack of several shapes (another sweep's) stacks each on its own.
TEST(SweepEstimate, AStackedPackCostsEachShapesRunsAtTheirGroupsSize) {
  EstimateFixture f;
  f.spec.pack = 3;
  std::vector<sweep::SweepRun> runs = sweep::plan_sweep(f.spec);
  ASSERT_EQ(runs.size(), 3u);
  runs[2].stack_shape = "another shape";  // as a run of another env's widths would have
  const sweep::MeasuredRates rates = sweep::read_measured_rates({f.csv(
      "pack.csv", kPackHeader + tiny_pack_row(2, 300, "GPU A", "mingru", "stacked cuda graph") +
                      tiny_pack_row(3, 90, "GPU A", "mingru", "stacked cuda graph") +
                      tiny_pack_row(1, 80) + tiny_pack_row(3, 60))});
  const sweep::SweepEstimate stacked = [&] {
    const testing::ScopedEnv stacking("MINRNN_STACKED_PACK", std::nullopt);  // CUDA's default
    return sweep::estimate_sweep(f.spec, runs, rates);
  }();
  EXPECT_EQ(stacked.packs, 2);
  EXPECT_DOUBLE_EQ(stacked.train_seconds, 2000 / 300.0 + 1000 / 80.0);
  const sweep::SweepEstimate streams = sweep::estimate_sweep(f.spec, runs, rates);
  EXPECT_EQ(streams.packs, 1);
  EXPECT_DOUBLE_EQ(streams.train_seconds, 3000 / 60.0);
}

TEST(SweepEstimate, APackSmallerThanEveryMeasuredOneIsMarkedAndAnUnmeasuredShapeNamesItsBench) {
  EstimateFixture f;
  const sweep::SweepEstimate e =
      f.estimate({f.csv("pack.csv", kPackHeader + tiny_pack_row(4, 40))});
  // The pack of two and seed 2 alone both borrow P 4's rate, each on a line of its own: each
  // names the bench of its own P.
  ASSERT_EQ(e.training.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(e.training[i].runs, 2 - int(i));
    EXPECT_EQ(e.training[i].pack, 2 - int(i));
    EXPECT_TRUE(e.training[i].below_measured);
    EXPECT_EQ(e.training[i].measured_pack, 4);
  }
  EXPECT_EQ(e.train_unmeasured, 0);
  EXPECT_EQ(e.eval_unmeasured, 1);  // no eval CSV
  EXPECT_DOUBLE_EQ(e.train_seconds, 3000 / 40.0);
  const std::string text = sweep::format_estimate(f.spec, e);
  EXPECT_NE(text.find("errs short"), std::string::npos) << text;
  EXPECT_NE(text.find("minrnn bench eval --env hopper --embed 32 --layers 2 --context 10"),
            std::string::npos)
      << text;
  // The pack of two's own rate is the bench to run, though P 4's stands in for it.
  EXPECT_NE(text.find("minrnn bench pack --device cuda --backbones mingru --packs 2 --embed 32 "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("minrnn bench pack --device cuda --backbones mingru --packs 1 --embed 32 "),
            std::string::npos)
      << text;
  EXPECT_EQ(sweep::estimate_json(e)["missing"].size(), 3u);

  // In TF32 nothing measured matches: the estimate says so and what to run, and adds up nothing.
  f.spec.sets.push_back("matmul_precision=tf32");
  const sweep::SweepEstimate tf32 =
      f.estimate({f.csv("pack.csv", kPackHeader + tiny_pack_row(4, 40))});
  EXPECT_EQ(tf32.train_unmeasured, 1);
  EXPECT_EQ(tf32.train_seconds, 0);
  EXPECT_TRUE(std::isnan(tf32.training[0].seconds));
  const std::string missing = sweep::format_estimate(f.spec, tf32);
  EXPECT_NE(missing.find("minrnn bench pack --device cuda --backbones mingru --packs 2 --embed 32 "
                         "--layers 2 --batch 16 --context 10 --matmul-precision tf32"),
            std::string::npos)
      << missing;
  EXPECT_NE(missing.find("Training, the device's time: unknown (none of its 1 line(s) has a "
                         "measured rate)"),
            std::string::npos)
      << missing;
}

TEST(SweepEstimate, RatesOfSeveralMachinesOrOfNoKnownBenchAreRefused) {
  EstimateFixture f;
  const std::string two =
      f.csv("two.csv", kPackHeader + tiny_pack_row(1, 1, "GPU A") + tiny_pack_row(1, 2, "GPU B"));
  std::string err = error_of([&] { f.estimate({two}); });
  EXPECT_NE(err.find("several machines (GPU A, GPU B)"), std::string::npos) << err;

  const std::string other = f.csv("other.csv", "step,loss\n1,2\n");
  err = error_of([&] { sweep::read_measured_rates({other}); });
  EXPECT_NE(err.find(other), std::string::npos) << err;
  EXPECT_NE(err.find("neither bench pack's CSV"), std::string::npos) << err;

  const std::string bad = f.csv("bad.csv", kPackHeader + tiny_pack_row(1, 1) +
                                               "cuda:0,GPU A,mingru,cuda graph,2,16,10,32,2,1,fp32,"
                                               "9,fast,1,1,1\n");
  err = error_of([&] { sweep::read_measured_rates({bad}); });
  EXPECT_NE(err.find(bad + ":3: column 'run_steps_per_s' holds 'fast'"), std::string::npos) << err;

  const std::string open_quote = f.csv("open.csv", kEvalHeader + "cpu,\"CPU B,hopper\n");
  err = error_of([&] { sweep::read_measured_rates({open_quote}); });
  EXPECT_NE(err.find(open_quote + ":2: a quote opened here is never closed"), std::string::npos)
      << err;

  err = error_of([&] { sweep::read_measured_rates({f.tmp.file("absent.csv")}); });
  EXPECT_NE(err.find("absent.csv: no such CSV file"), std::string::npos) << err;

  // A count a cast would have wrapped (P 1e12 read as -2147483648) or truncated (B 16.7 as 16).
  for (const auto& [cells, column] : {std::pair{"1e12,16", "pack"}, std::pair{"2,16.7", "batch"}}) {
    const std::string odd = f.csv("odd.csv", kPackHeader + "cuda:0,GPU A,mingru,cuda graph," +
                                                 cells + ",10,32,2,1,fp32,9,5,1,1,1\n");
    err = error_of([&] { sweep::read_measured_rates({odd}); });
    EXPECT_NE(err.find(odd + ":2: column '" + column + "'"), std::string::npos) << err;
    EXPECT_NE(err.find("expected a whole number from 1"), std::string::npos) << err;
  }
  // bench env's CSV has env_steps_per_s too, but no policy: not an evaluation's rates.
  const std::string env = f.csv("env.csv",
                                "machine,env,mode,num_envs,threads,steps,"
                                "env_steps_per_s,mj_steps_per_s\nA,hopper,single,1,1,"
                                "10,5,\n");
  err = error_of([&] { sweep::read_measured_rates({env}); });
  EXPECT_NE(err.find("neither bench pack's CSV"), std::string::npos) << err;
  err = error_of([&] { sweep::read_measured_rates({f.tmp.path.string()}); });
  EXPECT_NE(err.find(": a directory, not a CSV file"), std::string::npos) << err;
}

// Evaluation rates are a run's own environment's: halfcheetah's (which never falls) priced a
// hopper sweep's evaluations; on the CPU, training and evaluation rates of two machines are
// refused.
TEST(SweepEstimate, EvaluationsArePricedAtTheirEnvironmentsRateOnTheTrainingsMachine) {
  EstimateFixture f;
  const std::string row =
      ",4,100,32,2,10,\"mingru, streaming (state carried), packed engine\","
      "batched (E at once),";
  const std::string packs = f.csv("pack.csv", kPackHeader + tiny_pack_row(1, 100));
  const std::string cheetah =
      f.csv("cheetah.csv", kEvalHeader + "cpu,CPU B,halfcheetah" + row + "90\n");
  sweep::SweepEstimate e = f.estimate({packs, cheetah});
  ASSERT_EQ(e.evaluation.size(), 1u);
  EXPECT_EQ(e.evaluation[0].env, "hopper");  // the tiny config's hopper-medium-v2
  EXPECT_EQ(e.evaluation[0].policy, "");
  EXPECT_EQ(e.eval_unmeasured, 1);
  const std::string both = f.csv("both.csv", kEvalHeader + "cpu,CPU B,halfcheetah" + row +
                                                 "90\ncpu,CPU B,Hopper-v4" + row + "30\n");
  e = f.estimate({packs, both});
  EXPECT_DOUBLE_EQ(e.evaluation[0].env_steps_per_s, 30);
  EXPECT_EQ(e.evaluation[0].rates_env, "hopper");
  // A rollout runs to the env's time limit, whatever max_ep_len says (a walk through the commands,
  // 2026-11-29: the bound counted 200-step episodes that ran 1 000 steps).
  const int64_t at_the_limit = e.evaluation[0].env_steps;
  f.spec.sets.push_back("max_ep_len=200");
  EXPECT_EQ(f.estimate({packs, both}).evaluation[0].env_steps, at_the_limit);
  f.spec.sets.pop_back();
  // Without an env key, a Minari id's env comes from the id (its last part names none).
  f.spec.sets.insert(f.spec.sets.end(), {"env=", "dataset=mujoco/hopper/medium-v0"});
  e = f.estimate({packs, both});
  EXPECT_EQ(e.evaluation[0].env, "hopper");
  EXPECT_DOUBLE_EQ(e.evaluation[0].env_steps_per_s, 30);
  f.spec.sets.resize(f.spec.sets.size() - 2);

  f.spec.sets.back() = "device=cpu";
  const std::string cpu_packs =
      f.csv("cpu_pack.csv", kPackHeader + "cpu,CPU A,mingru,eager,1,16,10,32,2,1,fp32,9,5,1,1,1\n");
  const std::string err = error_of([&] { f.estimate({cpu_packs, both}); });
  EXPECT_NE(err.find("the training rates come from CPU A and the evaluation rates from CPU B"),
            std::string::npos)
      << err;
}

// A pack CSV from before the expansion and matmul_precision columns reads as the bench's defaults.
TEST(SweepEstimate, AnOlderPackCsvReadsAsTheBenchDefaults) {
  EstimateFixture f;
  const std::string old =
      f.csv("old.csv",
            "device,machine,backbone,step,pack,batch,context,embed,layers,rounds,run_steps_per_s,"
            "ms_per_run_step,step_gflop,tflops\ncuda:0,GPU A,mingru,cuda "
            "graph,2,16,10,32,2,9,50,1,1,1\n");
  const sweep::MeasuredRates rates = sweep::read_measured_rates({old});
  ASSERT_EQ(rates.packs.size(), 1u);
  EXPECT_EQ(rates.packs[0].shape.matmul_precision, "fp32");
  EXPECT_EQ(rates.packs[0].shape.expansion, 1.0);
  EXPECT_DOUBLE_EQ(f.estimate({old}).train_seconds, 3000 / 50.0);
}

// A CPU sweep whose config asks for tf32 is costed at the CPU's fp32 rows (a CPU's products are
// fp32; bench rows of the CPU say so since 2026-11-29, and the estimate asked for a tf32 CPU row no
// bench writes).
TEST(SweepEstimate, ACpuSweepAskingForTf32IsCostedAtTheCpusRates) {
  EstimateFixture f;
  f.spec.sets = {"max_steps=1000", "eval_every=250", "eval_episodes=4", "device=cpu",
                 "matmul_precision=tf32"};
  const std::string cpu =
      f.csv("cpu.csv", kPackHeader + "cpu,CPU A,mingru,eager,2,16,10,32,2,1,fp32,9,5,1,1,1\n");
  const sweep::SweepEstimate e = f.estimate({cpu});
  EXPECT_EQ(e.train_unmeasured, 0);
  EXPECT_EQ(sweep::format_estimate(f.spec, e).find("--matmul-precision"), std::string::npos);
}

// A sweep with nothing left says so, not an empty table (a walk through the commands, 2026-11-29).
TEST(SweepEstimate, NothingLeftToRunSaysSo) {
  EstimateFixture f;
  sweep::SweepEstimate done;
  done.runs = 3;
  const std::string text = sweep::format_estimate(f.spec, done);
  EXPECT_NE(text.find("0 of 3 runs left"), std::string::npos) << text;
  EXPECT_NE(text.find("Nothing left to run: `minrnn report " + f.spec.out + "` makes the table."),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("| runs |"), std::string::npos) << text;
  EXPECT_EQ(text.find("Rates from"), std::string::npos) << text;  // none read (walk 46)
}

// The final evaluation during training is counted where max_steps is off eval_every's cadence
// (walk 47: 1 000 steps every 300 counted 3 evaluations a run, not 300, 600, 900 and 1 000; with
// eval_every 0, none, not the one at the end).
TEST(SweepEstimate, TheFinalEvaluationIsCountedOffTheCadence) {
  EstimateFixture f;
  const std::string evals =
      f.csv("eval.csv", kEvalHeader +
                            "cpu,CPU B,hopper,4,100,32,2,10,\"mingru, streaming (state carried), "
                            "packed engine\",batched (E at once),50\n");
  for (const auto& [every, during] : {std::pair{"300", 4}, std::pair{"0", 1}}) {
    f.spec.sets = {"max_steps=1000", std::string("eval_every=") + every, "eval_episodes=4",
                   "device=cuda"};
    const sweep::SweepEstimate e = f.estimate({evals});
    ASSERT_EQ(e.evaluation.size(), 1u);
    // Three fresh runs: their evaluations during training (4 episodes), then the sweep's 5.
    EXPECT_EQ(e.evaluation[0].episodes, 3 * (during * 4 + 5)) << "eval_every " << every;
  }
  EXPECT_EQ(rl::evaluations_from(0, 1000, 250), 4);     // 250, 500, 750, 1 000
  EXPECT_EQ(rl::evaluations_from(500, 1000, 250), 3);   // its own (a kill may precede it) on
  EXPECT_EQ(rl::evaluations_from(999, 1000, 0), 1);     // the final one
  EXPECT_EQ(rl::evaluations_from(1000, 1000, 250), 0);  // trained
}

}  // namespace
}  // namespace minrnn
