// `minrnn bench eval`: environment steps/s of evaluation rollouts, E episodes of T steps, for
//   - streaming recurrent inference (minGRU/minLSTM carry their state: O(1) per step),
//   - DT-style re-encoding of the last K steps every step (how a Transformer must act; also run
//     with a minGRU to isolate the cost of re-encoding from the backbone),
// each with all E episodes in one batch and one episode at a time, against the physics-only rate
// (the same envs stepped with random actions, no model). Untrained models: speed does not depend
// on the weights. halfcheetah by default: it never terminates, so every episode has T steps.
// Files a markdown table under "## Evaluation (minrnn bench eval)" in docs/benchmarks.md, the
// numbers as CSV in runs/bench/eval.csv.
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>

#include "envs/registry.h"
#include "rl/decision_model.h"
#include "tools/bench_report.h"
#include "tools/commands.h"

namespace minrnn::cli {
namespace {

constexpr const char* kSection = "## Evaluation (minrnn bench eval)";
constexpr const char* kDefaultCsv = "runs/bench/eval.csv";
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

// Runs `count` episodes of T steps together (batch = count); returns seconds. `model` null =
// physics only. `reencode`: act from a forward pass over the last K steps instead of the streaming
// state.
double run_batch(const EvalBenchOptions& o, rl::DecisionModel* model, bool reencode, int count,
                 uint64_t seed) {
  torch::NoGradGuard no_grad;
  std::vector<std::unique_ptr<envs::Env>> envs;
  std::vector<std::vector<double>> obs;
  for (int i = 0; i < count; ++i) {
    envs.push_back(envs::make_env(o.env, seed + i));
    obs.push_back(envs.back()->reset(int64_t(seed + i)));
  }
  const int64_t B = count, od = envs[0]->spec().obs_dim, ad = envs[0]->spec().act_dim;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  core::SequenceState state;
  if (model != nullptr) state = (*model)->initial_state();
  std::vector<torch::Tensor> h_rtg, h_obs, h_act, h_time;
  auto rtg = torch::full({B, 1}, 3.6f);
  const auto t0 = Clock::now();
  for (int t = 0; t < o.steps; ++t) {
    std::vector<std::vector<double>> actions(B, std::vector<double>(ad));
    if (model == nullptr) {
      for (auto& a : actions)
        for (auto& x : a) x = uniform(rng);
    } else {
      auto s = torch::empty({B, od});
      for (int64_t i = 0; i < B; ++i)
        for (int64_t j = 0; j < od; ++j) s[i][j] = float(obs[i][j]);
      auto time = torch::full({B}, t, torch::kInt64);
      torch::Tensor action;
      if (!reencode) {
        action = (*model)->act(rtg, s, time, state);
        (*model)->observe_action(action, time, state);
      } else {
        h_rtg.push_back(rtg);
        h_obs.push_back(s);
        h_act.push_back(torch::zeros({B, ad}));
        h_time.push_back(time);
        const size_t from = h_obs.size() > size_t(o.context) ? h_obs.size() - o.context : 0;
        auto window = [&](const std::vector<torch::Tensor>& h) {
          return torch::stack(std::vector<torch::Tensor>(h.begin() + from, h.end()), 1);
        };
        action = (*model)
                     ->forward({window(h_rtg), window(h_obs), window(h_act), window(h_time)})
                     .select(1, -1);
        h_act.back() = action;
      }
      auto a = action.to(torch::kFloat64).contiguous();
      for (int64_t i = 0; i < B; ++i) {
        const double* p = a[i].data_ptr<double>();
        actions[i].assign(p, p + ad);
      }
    }
    for (int64_t i = 0; i < B; ++i) obs[i] = envs[i]->step(actions[i]).obs;
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Env steps/s for E episodes either in one batch or one after another.
double rate(const EvalBenchOptions& o, rl::DecisionModel* model, bool reencode, bool batched) {
  double seconds = 0;
  if (batched) {
    seconds = run_batch(o, model, reencode, o.episodes, 0);
  } else {
    for (int e = 0; e < o.episodes; ++e) seconds += run_batch(o, model, reencode, 1, e);
  }
  return double(o.episodes) * o.steps / seconds;
}

std::vector<Row> run(const EvalBenchOptions& o) {
  auto probe = envs::make_env(o.env, 0);
  std::vector<Row> rows;
  for (bool batched : {true, false}) {
    const std::string how = batched ? "batched (E at once)" : "one episode at a time";
    std::fprintf(stderr, "bench eval: physics only, %s ...\n", how.c_str());
    rows.push_back({"physics only (random actions)", how, rate(o, nullptr, false, batched)});
    for (const auto& [backbone, reencode] :
         std::vector<std::pair<std::string, bool>>{{"mingru", false},
                                                   {"minlstm", false},
                                                   {"hgrn", false},
                                                   {"mingru", true},
                                                   {"transformer", true}}) {
      torch::manual_seed(0);
      rl::DecisionModelOptions mo;
      mo.obs_dim = probe->spec().obs_dim;
      mo.act_dim = probe->spec().act_dim;
      mo.backbone = backbone;
      mo.n_layers = o.layers;
      mo.embed_dim = o.embed;
      rl::DecisionModel model(mo);
      model->eval();
      const std::string what =
          backbone + (reencode ? ", re-encode last K (DT style)" : ", streaming state");
      std::fprintf(stderr, "bench eval: %s, %s ...\n", what.c_str(), how.c_str());
      rows.push_back({what, how, rate(o, &model, reencode, batched)});
    }
  }
  return rows;
}

std::string format_table(const EvalBenchOptions& o, const std::vector<Row>& rows) {
  std::ostringstream md;
  md << "### " << timestamp() << " — " << machine_name() << ", CPU, torch threads "
     << torch::get_num_threads() << "\n\n"
     << "Command: `minrnn bench eval" << (o.quick ? " --quick" : "") << "`. " << o.env
     << ", E=" << o.episodes << " episodes × T=" << o.steps
     << " steps (no termination), untrained model: "
     << "embed " << o.embed << ", " << o.layers << " layers, K=" << o.context
     << ". Env steps/s = E·T / wall time, model inference and physics together.\n\n"
     << "| policy | episodes | env steps/s | vs physics only |\n|---|---|---|---|\n";
  char buf[256];
  double physics = 1;
  for (const auto& r : rows) {
    if (r.what.rfind("physics", 0) == 0) physics = r.env_steps_per_s;
    std::snprintf(buf, sizeof buf, "| %s | %s | %.0f | %.1f%% |\n", r.what.c_str(),
                  r.batching.c_str(), r.env_steps_per_s, 100.0 * r.env_steps_per_s / physics);
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
                 r.what, r.batching, csv_number(r.env_steps_per_s)});
  }
  return csv;
}

}  // namespace

void add_bench_eval(CLI::App& bench) {
  auto o = std::make_shared<EvalBenchOptions>();
  auto* sub = bench.add_subcommand("eval", "Rollout env steps/s: streaming vs re-encoding");
  sub->add_option("--env", o->env, "environment (default halfcheetah)");
  sub->add_option("--episodes", o->episodes, "E")->check(positive());
  sub->add_option("--steps", o->steps, "T steps per episode")->check(positive());
  sub->add_option("--context", o->context, "K (re-encoding window)")->check(positive());
  sub->add_option("--embed", o->embed, "embedding width")->check(positive());
  sub->add_option("--layers", o->layers, "layers")->check(positive());
  sub->add_flag("--quick", o->quick, "E=4, T=100: a smoke run");
  add_filing_options(sub, o->filing, kDefaultCsv);
  sub->callback([o, sub] {
    if (o->quick) {
      quick_default(sub, "--episodes", o->episodes, 4);
      quick_default(sub, "--steps", o->steps, 100);
    }
    const std::vector<Row> rows = run(*o);
    file_result(o->filing, kSection, format_table(*o, rows), results_csv(*o, rows), kDefaultCsv);
  });
}

}  // namespace minrnn::cli
