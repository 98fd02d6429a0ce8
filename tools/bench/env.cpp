// `minrnn bench env`: environment throughput. For each environment: env-steps/s of one env, of a
// VectorEnv of N envs, and the raw mj_step rate of the same model (one thread's physics). Prints a
// markdown table and files it under "## Environments (minrnn bench env)" in docs/benchmarks.md,
// the numbers as CSV in runs/bench/env.csv.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "envs/locomotion.h"
#include "envs/registry.h"
#include "envs/rng.h"
#include "envs/vector_env.h"
#include "io/csv.h"
#include "tools/bench/report.h"
#include "tools/commands.h"

namespace minrnn::cli::bench_env {

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kSection = "## Environments (minrnn bench env)";
constexpr const char* kDefaultCsv = "runs/bench/env.csv";

struct BenchOptions {
  std::vector<std::string> envs = {"halfcheetah", "hopper", "walker2d"};
  std::vector<int> sizes = {1, 2, 4, 8, 16};
  int steps = 20000;  // env steps per measurement (across all envs of a vector)
  bool quick = false;
  BenchFiling filing;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<double> random_action(envs::Rng& rng, int act_dim) {
  std::vector<double> a(act_dim);
  for (double& x : a) x = rng.uniform(-1, 1);
  return a;
}

// Uniform random actions with resets on episode end, as a data collector would run it.
double single_env_rate(const std::string& name, int steps) {
  envs::LocomotionEnv env(name, 0);
  envs::Rng rng(1);
  const int act_dim = env.spec().act_dim;
  const auto start = Clock::now();
  for (int t = 0; t < steps; ++t) {
    const auto r = env.step(random_action(rng, act_dim));
    if (r.terminated || r.truncated) env.reset();
  }
  return steps / seconds_since(start);
}

double vector_env_rate(const std::string& name, int num_envs, int steps, int* threads) {
  envs::VectorEnv vec(name, num_envs, 0);
  *threads = vec.num_threads();
  envs::Rng rng(1);
  vec.reset(0);
  const int rounds = std::max(1, steps / num_envs);
  std::vector<std::vector<double>> actions(num_envs);
  const auto start = Clock::now();
  for (int t = 0; t < rounds; ++t) {
    for (auto& a : actions) a = random_action(rng, vec.spec().act_dim);
    vec.step(actions);
  }
  return static_cast<double>(rounds) * num_envs / seconds_since(start);
}

// The same workload as single_env_rate (random controls held for frame_skip physics steps,
// restart when the env would terminate or time out) on bare mj_step: one thread's physics, what
// one env pays for its wrapper on top.
double mj_step_rate(const std::string& name, int env_steps) {
  envs::LocomotionEnv env(name, 0);
  const envs::LocomotionTask& task = env.task();
  const mjModel* m = env.model();
  envs::DataPtr data(mj_makeData(m));
  mjData* d = data.get();
  envs::Rng rng(1);
  auto restart = [&] {
    mj_resetData(m, d);
    mj_forward(m, d);
  };
  restart();
  int episode_steps = 0;
  const auto start = Clock::now();
  for (int t = 0; t < env_steps; ++t) {
    for (int i = 0; i < m->nu; ++i) d->ctrl[i] = rng.uniform(-1, 1);
    for (int k = 0; k < task.spec.frame_skip; ++k) mj_step(m, d);
    const bool ended =
        task.options.terminate_when_unhealthy && !task.is_healthy(d->qpos, m->nq, d->qvel, m->nv);
    if (ended || ++episode_steps == task.spec.max_episode_steps) {
      restart();
      episode_steps = 0;
    }
  }
  return static_cast<double>(env_steps) * task.spec.frame_skip / seconds_since(start);
}

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f", x);
  return buf;
}

struct EnvRates {
  std::string env;
  int frame_skip = 1;
  double single = 0;                // env steps/s of one env
  std::vector<double> vector;       // per --sizes entry, summed over the vector's envs
  std::vector<int> vector_threads;  // threads the vector env used, per --sizes entry
  double mj_steps = 0;              // bare mj_step/s on the same workload
};

std::vector<EnvRates> run(const BenchOptions& opt) {
  std::vector<EnvRates> all;
  for (const auto& name : opt.envs) {
    // The env as named, version and options with it: hopper-v5 is not hopper (v4).
    const envs::ResolvedEnv env = envs::resolve_env(name);
    std::fprintf(stderr, "bench env: %s ...\n", env.canonical.c_str());
    EnvRates r;
    r.env = env.canonical;
    r.frame_skip = env.task.spec.frame_skip;
    r.single = single_env_rate(env.canonical, opt.steps);
    for (int n : opt.sizes) {
      int threads = 0;
      r.vector.push_back(vector_env_rate(env.canonical, n, opt.steps, &threads));
      r.vector_threads.push_back(threads);
    }
    r.mj_steps = mj_step_rate(env.canonical, opt.steps);
    all.push_back(r);
  }
  return all;
}

std::string format_table(const BenchOptions& opt, const std::vector<EnvRates>& all) {
  std::ostringstream md;
  md << entry_heading(machine_name() + " (" + std::to_string(std::thread::hardware_concurrency()) +
                      " hardware threads)")
     << " (" << opt.steps
     << " steps a measurement). Uniform random actions, auto-reset; rates in env steps per second "
        "(vector: summed "
        "over its envs). mj_step/s: bare mj_step on the same workload (random controls, restart "
        "on termination); one thread's physics = mj_step/s / frame_skip (a vector env's threads "
        "go past it).\n\n"
     << "| env | 1 env |";
  for (int n : opt.sizes) md << " vec N=" << n << " |";
  md << " mj_step/s | one thread's physics |\n|---|---:|";
  for (size_t i = 0; i < opt.sizes.size(); ++i) md << "---:|";
  md << "---:|---:|\n";
  for (const auto& r : all) {
    md << "| " << r.env << " | " << fmt(r.single) << " |";
    for (double rate : r.vector) md << " " << fmt(rate) << " |";
    md << " " << fmt(r.mj_steps) << " | " << fmt(r.mj_steps / r.frame_skip) << " |\n";
  }
  if (!all.empty()) {
    md << "\nVector env threads per N: ";
    for (size_t i = 0; i < all.back().vector_threads.size(); ++i) {
      md << (i ? ", " : "") << all.back().vector_threads[i];
    }
    md << ".\n";
  }
  return md.str();
}

// One row per measurement: mode single (1 env), vector (num_envs, threads) or mj_step (physics
// steps/s; env_steps_per_s is one thread's physics in env steps).
BenchCsv results_csv(const BenchOptions& opt, const std::vector<EnvRates>& all) {
  const std::string machine = machine_name();
  // No torch_threads: the physics runs on the vector env's own threads (the `threads` column).
  BenchCsv csv({"machine", "env", "mode", "num_envs", "threads", "steps", "env_steps_per_s",
                "mj_steps_per_s"},
               /*torch_threads=*/0);
  for (const auto& r : all) {
    const std::string steps = std::to_string(opt.steps);
    csv.add_row({machine, r.env, "single", "1", "1", steps, io::csv_number(r.single), ""});
    for (size_t i = 0; i < r.vector.size(); ++i) {
      csv.add_row({machine, r.env, "vector", std::to_string(opt.sizes[i]),
                   std::to_string(r.vector_threads[i]), steps, io::csv_number(r.vector[i]), ""});
    }
    csv.add_row({machine, r.env, "mj_step", "1", "1", steps,
                 io::csv_number(r.mj_steps / r.frame_skip), io::csv_number(r.mj_steps)});
  }
  return csv;
}

}  // namespace

void add(CLI::App& bench) {
  auto opt = std::make_shared<BenchOptions>();
  auto* sub = bench.add_subcommand("env", "Environment steps/s: one env, vector env, raw mj_step");
  sub->add_option("--envs", opt->envs, "Environments (names or D4RL ids)")
      ->delimiter(',')
      ->check(env_name());
  sub->add_option("--sizes", opt->sizes, "Vector env sizes")
      ->delimiter(',')
      ->check(positive_count());
  sub->add_option("--steps", opt->steps, "Env steps per measurement")->check(positive_count());
  sub->add_flag("--quick", opt->quick, "Small counts (2000 steps) for a smoke run");
  add_filing_options(sub, opt->filing, kDefaultCsv, [opt] { return results_csv(*opt, {}); });
  sub->callback([opt, sub] {
    if (opt->quick) quick_default(sub, "--steps", opt->steps, 2000);
    const std::vector<EnvRates> all = run(*opt);
    file_result(opt->filing, kSection, format_table(*opt, all), results_csv(*opt, all),
                kDefaultCsv);
  });
}

}  // namespace minrnn::cli::bench_env
