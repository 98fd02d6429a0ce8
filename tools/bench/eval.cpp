// `minrnn bench eval`: environment steps/s of evaluation rollouts (eval::rollout, the path of
// `minrnn eval`), E episodes of T steps, for
//   - streaming recurrent inference (minGRU/minLSTM/HGRN carry their state: O(1) per step),
//   - DT-style re-encoding of the last K steps every step (how a Transformer must act; also run
//     with a minGRU to isolate the cost of re-encoding from the backbone),
// with the packed engine and, for comparison, the LibTorch one (infer/policy.h); each with all E
// episodes in one batch and one episode at a time, against the physics-only rate (the same envs
// stepped with random actions, no model). Untrained models: speed does not depend on the
// weights. halfcheetah by default: it never terminates, so every episode has T steps (others end
// where they terminate; the rate counts the steps taken).
// Files a markdown table under "## Evaluation (minrnn bench eval)" in docs/benchmarks.md, the
// numbers as CSV in runs/bench/eval.csv.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>

#include "envs/registry.h"
#include "eval/rollout.h"
#include "io/csv.h"
#include "io/workers.h"
#include "sweep/estimate.h"
#include "tools/bench/agent.h"
#include "tools/bench/report.h"
#include "tools/commands.h"

namespace minrnn::cli::bench_eval {
namespace {

constexpr const char* kSection = "## Evaluation (minrnn bench eval)";
constexpr const char* kDefaultCsv = sweep::kEvalRatesCsv;  // what `sweep --estimate` reads
using Clock = std::chrono::steady_clock;

struct EvalBenchOptions {
  std::string env = "halfcheetah";
  int episodes = 10;  // E
  int steps = 1000;   // T per episode
  int64_t context = 20, embed = 128, layers = 3;
  bool quick = false;
  BenchFiling filing;
};

struct Row {
  std::string what, batching;
  double env_steps_per_s = 0;
};

// Physics only: `count` episodes of T steps with random actions, stepped together; returns seconds.
// An episode that ends (hopper falls, a time limit) starts again, reset inside the time, so every
// slot steps T times. With threads > 1 the episodes are split into eval::rollout's shards, which
// that many threads step: the rate the same cores give physics alone.
double physics_seconds(const EvalBenchOptions& o, int count, uint64_t seed, int threads = 1) {
  std::vector<std::unique_ptr<envs::Env>> envs;
  for (int i = 0; i < count; ++i) {
    envs.push_back(envs::make_env(o.env, seed + i));
    envs.back()->reset(int64_t(seed + i));
  }
  const int64_t ad = envs[0]->spec().act_dim;
  const int shards = threads > 1 ? eval::rollout_shards(count) : 1;
  io::Workers workers(std::min(threads, shards));  // rollout()'s shards' pool, started untimed
  const auto t0 = Clock::now();
  workers.for_each(shards, [&](int64_t k) {
    std::mt19937_64 rng(seed + k);
    std::uniform_real_distribution<double> uniform(-1, 1);
    std::vector<double> action(ad);
    for (int t = 0; t < o.steps; ++t) {
      for (int64_t i = count * k / shards; i < count * (k + 1) / shards; ++i) {
        for (auto& x : action) x = uniform(rng);
        const envs::StepResult r = envs[i]->step(action);
        if (r.terminated || r.truncated) envs[i]->reset(int64_t(seed + i) + count * (t + 1));
      }
    }
  });
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

rl::Agent bench_agent(const EvalBenchOptions& o, const std::string& backbone) {
  return untrained_agent(o.env, backbone, o.layers, o.embed, o.context);
}

struct PolicyCase {
  std::string backbone;
  rl::EvalMode mode;
  rl::PolicyEngine engine;
};

// Env steps/s of eval::rollout — the path `minrnn eval` takes — for E episodes of up to T steps
// (the steps taken: an episode ends where the env terminates it), either in one batch or one
// after another, over its stepping time: making the envs (~1.5 ms each,
// mj_makeData) and packing the policy are paid once per episode, which at the benchmark's T = 100
// would weigh 10x what they do in a 1000-step episode. `agent` null: physics only, timed alike.
double rate(const EvalBenchOptions& o, rl::Agent* agent, const PolicyCase& c, bool batched) {
  double seconds = 0, steps = 0;
  const int runs = batched ? 1 : o.episodes;
  for (int e = 0; e < runs; ++e) {
    const int count = batched ? o.episodes : 1;
    if (agent == nullptr) {
      seconds += physics_seconds(o, count, e);
      steps += double(count) * o.steps;
      continue;
    }
    eval::RolloutOptions ro;
    ro.mode = c.mode;
    ro.engine = c.engine;
    ro.episodes = count;
    ro.max_steps = o.steps;
    ro.seed = e;
    ro.target_return = 3600;
    const eval::RolloutResult result = eval::rollout(*agent, ro);
    seconds += result.step_seconds;
    for (int length : result.lengths) steps += length;
  }
  return steps / seconds;
}

std::vector<Row> run(const EvalBenchOptions& o) {
  using rl::EvalMode;
  using rl::PolicyEngine;
  const std::vector<PolicyCase> cases = {{"mingru", EvalMode::kStreaming, PolicyEngine::kTorch},
                                         {"mingru", EvalMode::kStreaming, PolicyEngine::kPacked},
                                         {"minlstm", EvalMode::kStreaming, PolicyEngine::kPacked},
                                         {"hgrn", EvalMode::kStreaming, PolicyEngine::kPacked},
                                         {"mingru", EvalMode::kWindow, PolicyEngine::kPacked},
                                         {"transformer", EvalMode::kWindow, PolicyEngine::kTorch},
                                         {"transformer", EvalMode::kWindow, PolicyEngine::kPacked}};
  std::vector<Row> rows;
  for (bool batched : {true, false}) {
    const std::string how = batched ? "batched (E at once)" : "one episode at a time";
    std::fprintf(stderr, "bench eval: physics only, %s ...\n", how.c_str());
    rows.push_back({"physics only (random actions)", how, rate(o, nullptr, {}, batched)});
    const int threads = at::get_num_threads();
    if (batched && threads > 1 && eval::rollout_shards(o.episodes) > 1) {
      const std::string what = "physics only, episodes split over " + std::to_string(threads) +
                               " threads (as the packed engine's)";
      std::fprintf(stderr, "bench eval: %s ...\n", what.c_str());
      rows.push_back(
          {what, how, o.episodes * double(o.steps) / physics_seconds(o, o.episodes, 0, threads)});
    }
    for (const auto& c : cases) {
      rl::Agent agent = bench_agent(o, c.backbone);
      const std::string what =
          c.backbone + ", " + rl::eval_mode_name(c.mode) + " (" +
          (c.mode == EvalMode::kWindow ? "re-encode last K" : "state carried") + "), " +
          rl::policy_engine_name(c.engine) + " engine";
      std::fprintf(stderr, "bench eval: %s, %s ...\n", what.c_str(), how.c_str());
      rows.push_back({what, how, rate(o, &agent, c, batched)});
    }
  }
  return rows;
}

std::string format_table(const EvalBenchOptions& o, const std::vector<Row>& rows) {
  std::ostringstream md;
  md << entry_heading(machine_name() + ", CPU, torch threads " +
                      std::to_string(torch::get_num_threads()))
     << ". " << o.env << ", E=" << o.episodes << " episodes × T=" << o.steps << " steps"
     << (o.env == "halfcheetah" ? " (it never terminates: every episode T steps)"
                                : " at most (a policy's episode ends where the env terminates it; "
                                  "steps counted as taken; physics alone starts a fallen "
                                  "episode again)")
     << ", untrained model: "
     << "embed " << o.embed << ", " << o.layers << " layers, K=" << o.context
     << ". Env steps/s = E·T / wall time of the stepping (model inference and physics together; "
     << "making the envs and the policy excluded).\n\n"
     << " The packed engine splits a batch's episodes over the threads (eval::rollout's shards);"
     << " the last column divides by physics alone split the same way.\n\n"
     << "| policy | episodes | env steps/s | vs physics only (1 thread) | vs physics split over "
        "threads |\n|---|---|---|---|---|\n";
  char buf[384];
  double physics = 1, physics_split = 1;
  for (const auto& r : rows) {
    if (r.what == "physics only (random actions)") physics = physics_split = r.env_steps_per_s;
    if (r.what.rfind("physics only, episodes split", 0) == 0) physics_split = r.env_steps_per_s;
    std::snprintf(buf, sizeof buf, "| %s | %s | %.0f | %.1f%% | %.1f%% |\n", r.what.c_str(),
                  r.batching.c_str(), r.env_steps_per_s, 100.0 * r.env_steps_per_s / physics,
                  100.0 * r.env_steps_per_s / physics_split);
    md << buf;
  }
  return md.str();
}

BenchCsv results_csv(const EvalBenchOptions& o, const std::vector<Row>& rows) {
  BenchCsv csv({"device", "machine", "env", "episodes", "steps", "embed", "layers", "context",
                "policy", "batching", "env_steps_per_s"});
  for (const auto& r : rows) {
    csv.add_row({"cpu", machine_name(), o.env, std::to_string(o.episodes), std::to_string(o.steps),
                 std::to_string(o.embed), std::to_string(o.layers), std::to_string(o.context),
                 r.what, r.batching, io::csv_number(r.env_steps_per_s)});
  }
  return csv;
}

}  // namespace

void add(CLI::App& bench) {
  auto o = std::make_shared<EvalBenchOptions>();
  auto* sub = bench.add_subcommand("eval", "Rollout env steps/s: streaming vs re-encoding");
  sub->add_option("--env", o->env, "environment (default halfcheetah)")->check(env_name());
  sub->add_option("--episodes", o->episodes, "E")->check(positive_count());
  sub->add_option("--steps", o->steps, "T steps per episode")->check(positive_count());
  sub->add_option("--context", o->context, "K (re-encoding window)")->check(positive_count());
  sub->add_option("--embed", o->embed, "embedding width")->check(positive_count());
  sub->add_option("--layers", o->layers, "layers")->check(positive_count());
  sub->add_flag("--quick", o->quick, "E=4, T=100: a smoke run");
  add_filing_options(sub, o->filing, kDefaultCsv, [o] { return results_csv(*o, {}); });
  sub->callback([o, sub] {
    if (o->quick) {
      quick_default(sub, "--episodes", o->episodes, 4);
      quick_default(sub, "--steps", o->steps, 100);
    }
    const std::vector<Row> rows = run(*o);
    file_result(o->filing, kSection, format_table(*o, rows), results_csv(*o, rows), kDefaultCsv);
  });
}

}  // namespace minrnn::cli::bench_eval
