// Small on-disk datasets and configs for the rl/eval tests.
#pragma once
#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "datasets/d4rl.h"
#include "envs/registry.h"
#include "io/atomic_file.h"
#include "rl/config.h"
#include "rl/trainer.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn::testing {

// Hopper episodes from a fixed random linear policy a = tanh(W·obs) + noise, so actions are
// learnable from states (a pure random policy would leave nothing to fit).
inline std::string write_hopper_dataset(const std::filesystem::path& dir, int steps = 1500) {
  auto env = envs::make_env("hopper", 0);
  const int obs_dim = env->spec().obs_dim, act_dim = env->spec().act_dim;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> w(act_dim * obs_dim);
  for (auto& x : w) x = 0.5 * normal(rng);
  data::Transitions d;
  d.obs_dim = obs_dim;
  d.act_dim = act_dim;
  int episode = 0;
  auto obs = env->reset(episode);
  for (int i = 0; i < steps; ++i) {
    std::vector<double> a(act_dim);
    for (int k = 0; k < act_dim; ++k) {
      double z = 0;
      for (int j = 0; j < obs_dim; ++j) z += w[k * obs_dim + j] * obs[j];
      a[k] = std::tanh(z) * 0.9 + 0.05 * normal(rng);
    }
    auto r = env->step(a);
    std::vector<float> fo(obs.begin(), obs.end()), fa(a.begin(), a.end()),
        fn(r.obs.begin(), r.obs.end());
    const bool timeout = r.truncated || i == steps - 1;
    d.append_step(fo.data(), fa.data(), static_cast<float>(r.reward), fn.data(), r.terminated,
                  timeout && !r.terminated);
    obs = (r.terminated || timeout) ? env->reset(++episode) : r.obs;
  }
  const auto path = (dir / "hopper-test.hdf5").string();
  data::write_d4rl(path, d);
  return path;
}

// A tiny config on `dataset`: 2 layers of width 16, K = 5.
inline rl::TrainConfig tiny_config(const std::string& dataset, const std::string& backbone,
                                   std::vector<std::string> extra = {}) {
  std::vector<std::string> sets = {
      "dataset=" + dataset, "env=hopper",        "backbone=" + backbone, "n_layers=2",
      "embed_dim=16",       "context_len=5",     "batch_size=8",         "lr=1e-3",
      "warmup_steps=10",    "max_steps=40",      "checkpoint_every=10",  "log_every=1",
      "eval_episodes=2",    "target_return=1000"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return rl::parse_config("", "test", ".", sets);
}

// A run dir beside a small hopper dataset, and train options that record each evaluation (a row of
// evals.csv whose values follow from the step, and the step in `evaluated`).
struct TrainFixture {
  TempDir tmp;
  std::string data = write_hopper_dataset(tmp.path, 300);
  std::filesystem::path run = tmp.path / "run";
  std::vector<int64_t> evaluated;

  rl::TrainOptions options(int64_t stop_after = -1) {
    rl::TrainOptions o;
    o.quiet = true;
    o.run_dir = run.string();
    o.stop_after = stop_after;
    o.evaluate = [this](int64_t step, rl::Agent&, rl::EvaluationProgress&) {
      evaluated.push_back(step);
      rl::append_eval_row(run.string(), {step, 10.0 * step, 1.5, 0.25 * step, 0.125});
    };
    return o;
  }
};

// An evaluation standing in for a rollout: its row is a function of the weights (their sum), so a
// run's evals.csv tells its weights apart at every evaluation.
inline rl::Evaluate weight_sum_evaluation(const std::string& run_dir) {
  return [run_dir](int64_t step, rl::Agent& agent, rl::EvaluationProgress&) {
    double sum = 0;
    for (const auto& p : agent.model->parameters()) sum += p.sum().item<double>();
    rl::append_eval_row(run_dir, {step, sum, 0, sum / 10, 0});
  };
}

// The last step a run's metrics.csv has a row for (0 before the first).
inline int64_t last_logged_step(const std::filesystem::path& run) {
  int64_t last = 0;
  for (const auto& line : io::read_complete_lines((run / "metrics.csv").string())) {
    if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0])))
      last = std::stoll(line.substr(0, line.find(',')));
  }
  return last;
}

// The first column of each line of a run's CSV (metrics.csv, evals.csv), after its header where
// `header`.
inline std::vector<int64_t> steps_of(const std::filesystem::path& csv, bool header) {
  std::stringstream in(read_text(csv));
  std::string line;
  if (header) std::getline(in, line);
  std::vector<int64_t> steps;
  while (std::getline(in, line)) steps.push_back(std::stoll(line.substr(0, line.find(','))));
  return steps;
}

// The checkpoints of two runs hold the same step and the same weights, bit for bit.
inline void expect_same_weights(const std::filesystem::path& a, const std::filesystem::path& b) {
  const rl::Agent x = rl::load_agent(a.string()), y = rl::load_agent(b.string());
  EXPECT_EQ(x.step, y.step);
  auto py = y.model->named_parameters();
  for (const auto& p : x.model->named_parameters())
    EXPECT_TRUE(torch::equal(p.value(), py[p.key()])) << a << " " << b << " " << p.key();
}

// A run's metrics.csv without its timing columns (steps_per_s, elapsed_s differ run to run).
inline std::string metrics_without_timing(const std::filesystem::path& run) {
  std::stringstream in(read_text(run / "metrics.csv")), out;
  for (std::string line; std::getline(in, line);) {
    size_t cut = line.size();
    for (int commas = 0; commas < 2 && cut != std::string::npos; ++commas)
      cut = line.rfind(',', cut - 1);
    out << line.substr(0, cut) << '\n';
  }
  return out.str();
}

// What `f` throws (its what()), or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace minrnn::testing
