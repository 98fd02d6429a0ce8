// `minrnn bench policy`: the latency of one Policy::act call (infer/policy.h) at batch 1 on one
// thread — what a user's control loop pays per action — per backbone and engine: p50 / p99 / mean
// over N calls, episodes of T steps (reset between them, so windows fill and refill as in use).
// Untrained models on halfcheetah's dimensions. Files a markdown table under "## Policy latency
// (minrnn bench policy)" in docs/benchmarks.md and the numbers in runs/bench/policy.csv.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>

#include "envs/registry.h"
#include "infer/policy.h"
#include "io/csv.h"
#include "tools/bench/agent.h"
#include "tools/bench/report.h"
#include "tools/commands.h"

namespace minrnn::cli::bench_policy {
namespace {

constexpr const char* kSection = "## Policy latency (minrnn bench policy)";
constexpr const char* kDefaultCsv = "runs/bench/policy.csv";
using Clock = std::chrono::steady_clock;

struct PolicyBenchOptions {
  std::string env = "halfcheetah";
  int calls = 20000;
  int episode = 1000;  // T: steps between resets
  int64_t context = 20, embed = 128, layers = 3;
  bool quick = false;
  BenchFiling filing;
};

struct Row {
  std::string backbone, mode, engine;
  double p50_us = 0, p99_us = 0, mean_us = 0;
};

Row measure(const PolicyBenchOptions& o, const std::string& backbone, rl::EvalMode mode,
            rl::PolicyEngine engine) {
  const rl::Agent agent = untrained_agent(o.env, backbone, o.layers, o.embed, o.context);
  const int64_t od = agent.model->options().obs_dim, ad = agent.model->options().act_dim;
  rl::Policy policy(agent, {mode, engine});
  std::mt19937_64 rng(0);
  std::normal_distribution<double> normal;
  std::vector<double> obs(od), action(ad);
  std::vector<double> micros;
  micros.reserve(o.calls);
  for (int i = 0; i < o.calls; ++i) {
    if (i % o.episode == 0) policy.reset();
    for (auto& x : obs) x = normal(rng);
    const auto t0 = Clock::now();
    policy.act(obs.data(), action.data());
    policy.observe_reward(1.0);
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  Row r{backbone, rl::eval_mode_name(mode), rl::policy_engine_name(engine)};
  double sum = 0;
  for (double m : micros) sum += m;
  r.mean_us = sum / micros.size();
  std::sort(micros.begin(), micros.end());
  r.p50_us = median(micros);
  r.p99_us = micros[std::min(micros.size() - 1, micros.size() * 99 / 100)];
  return r;
}

std::vector<Row> run(const PolicyBenchOptions& o) {
  using rl::EvalMode;
  using rl::PolicyEngine;
  const int threads = torch::get_num_threads();
  // A control loop's one core: the torch engine's (LibTorch's threads); the packed engine's policy
  // runs on the calling thread alone by default (PolicyOptions::threads).
  torch::set_num_threads(1);
  std::vector<Row> rows;
  for (const auto& [backbone, mode] :
       std::vector<std::pair<std::string, EvalMode>>{{"mingru", EvalMode::kStreaming},
                                                     {"minlstm", EvalMode::kStreaming},
                                                     {"hgrn", EvalMode::kStreaming},
                                                     {"mingru", EvalMode::kWindow},
                                                     {"transformer", EvalMode::kWindow}}) {
    for (auto engine : {PolicyEngine::kPacked, PolicyEngine::kTorch}) {
      std::fprintf(stderr, "bench policy: %s %s, %s engine ...\n", backbone.c_str(),
                   rl::eval_mode_name(mode), rl::policy_engine_name(engine));
      rows.push_back(measure(o, backbone, mode, engine));
    }
  }
  torch::set_num_threads(threads);
  return rows;
}

std::string format_table(const PolicyBenchOptions& o, const std::vector<Row>& rows) {
  std::ostringstream md;
  md << entry_heading(machine_name() + ", CPU, 1 thread") << ". " << o.env
     << " dimensions, untrained model: embed " << o.embed << ", " << o.layers
     << " layers, K=" << o.context << "; batch 1; " << o.calls
     << " calls of `act` + `observe_reward`, reset every " << o.episode
     << ". Latency in µs; actions/s = 10⁶ / mean.\n\n"
     << "| backbone | mode | engine | p50 µs | p99 µs | mean µs | actions/s |\n"
     << "|---|---|---|---|---|---|---|\n";
  char buf[256];
  for (const auto& r : rows) {
    std::snprintf(buf, sizeof buf, "| %s | %s | %s | %.1f | %.1f | %.1f | %.0f |\n",
                  r.backbone.c_str(), r.mode.c_str(), r.engine.c_str(), r.p50_us, r.p99_us,
                  r.mean_us, 1e6 / r.mean_us);
    md << buf;
  }
  return md.str();
}

BenchCsv results_csv(const PolicyBenchOptions& o, const std::vector<Row>& rows) {
  BenchCsv csv({"device", "machine", "env", "calls", "episode", "embed", "layers", "context",
                "backbone", "mode", "engine", "p50_us", "p99_us", "mean_us"},
               /*torch_threads=*/1);  // run() measures on one, as a control loop's core
  for (const auto& r : rows) {
    csv.add_row({"cpu", machine_name(), o.env, std::to_string(o.calls), std::to_string(o.episode),
                 std::to_string(o.embed), std::to_string(o.layers), std::to_string(o.context),
                 r.backbone, r.mode, r.engine, io::csv_number(r.p50_us), io::csv_number(r.p99_us),
                 io::csv_number(r.mean_us)});
  }
  return csv;
}

}  // namespace

void add(CLI::App& bench) {
  auto o = std::make_shared<PolicyBenchOptions>();
  auto* sub = bench.add_subcommand("policy", "Latency of one Policy::act at batch 1, one thread");
  sub->add_option("--env", o->env, "environment whose dimensions to use (default halfcheetah)")
      ->check(env_name());
  sub->add_option("--calls", o->calls, "act calls per row (default 20000)")
      ->check(positive_count());
  sub->add_option("--episode", o->episode, "steps between resets (default 1000)")
      ->check(positive_count());
  sub->add_option("--context", o->context, "K (window)")->check(positive_count());
  sub->add_option("--embed", o->embed, "embedding width")->check(positive_count());
  sub->add_option("--layers", o->layers, "layers")->check(positive_count());
  sub->add_flag("--quick", o->quick, "500 calls, episodes of 100: a smoke run");
  add_filing_options(sub, o->filing, kDefaultCsv, [o] { return results_csv(*o, {}); });
  sub->callback([o, sub] {
    if (o->quick) {
      quick_default(sub, "--calls", o->calls, 500);
      quick_default(sub, "--episode", o->episode, 100);
    }
    const std::vector<Row> rows = run(*o);
    file_result(o->filing, kSection, format_table(*o, rows), results_csv(*o, rows), kDefaultCsv);
  });
}

}  // namespace minrnn::cli::bench_policy
