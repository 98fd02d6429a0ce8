// Fidelity against Gymnasium's v4 and v5 environments. scripts/fidelity_gymnasium.py records
// Gymnasium episodes (start state, actions, observations, rewards) to a JSON trace that names each
// env as make_env takes it ("hopper", "hopper-v5", or an env_spec JSON with the options the
// episodes were recorded with).
// - EnvFidelity (default suite): a small trace recorded that way and committed,
//   tests/envs/data/gymnasium-traces.json (its "command" says how; actions up to 1.5, beyond the
//   actuators' range, so the control cost on the raw action is checked too).
// - EnvFidelitySlow: the trace MINRNN_FIDELITY_TRACE names (the script runs it on long traces it
//   records; skipped without the variable, labelled slow).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "envs/registry.h"
#include "tests/paths.h"

namespace minrnn::envs {
namespace {

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    worst = std::max(worst, std::abs(a[i] - b[i]));
  }
  return worst;
}

// Replays every episode of the trace at `path` in our env and compares observations, rewards and
// terminations step by step (and one step at a time from Gymnasium's own states).
void check_against_trace(const std::string& path) {
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  const auto trace = nlohmann::json::parse(in);
  const double tolerance_first_step = trace.value("tolerance_first_step", 1e-6);
  // Set when both sides run the same MuJoCo build: every step of the first 100, open loop.
  const double tolerance_open_loop = trace.value("tolerance_open_loop", -1.0);
  for (const auto& [env_name, episodes] : trace["envs"].items()) {
    const auto env = make_env(env_name);
    // Per step index t (1-based): worst |obs - gym obs| and |reward - gym reward| over episodes.
    std::vector<double> obs_err, reward_err;
    size_t steps_compared = 0, terminations_agree = 0, terminations = 0;
    for (const auto& ep : episodes) {
      env->reset();
      env->set_state(ep["qpos"].get<std::vector<double>>(), ep["qvel"].get<std::vector<double>>());
      const auto& actions = ep["actions"];
      for (size_t t = 0; t < actions.size(); ++t) {
        const StepResult r = env->step(actions[t].get<std::vector<double>>());
        const double eo = max_abs_diff(r.obs, ep["obs"][t].get<std::vector<double>>());
        const double er = std::abs(r.reward - ep["rewards"][t].get<double>());
        if (obs_err.size() <= t) obs_err.resize(t + 1, 0.0), reward_err.resize(t + 1, 0.0);
        obs_err[t] = std::max(obs_err[t], eo);
        reward_err[t] = std::max(reward_err[t], er);
        ++steps_compared;
        const bool gym_terminated = ep["terminated"][t].get<bool>();
        if (gym_terminated || r.terminated) {
          ++terminations;
          terminations_agree += gym_terminated == r.terminated;
        }
        if (r.terminated || gym_terminated || r.truncated) break;
      }
    }
    // Re-synced: Gymnasium's state before every step, one step each; isolates per-step model
    // differences from the divergence that chaotic contact dynamics amplify.
    double resync_obs_err = 0, resync_reward_err = 0;
    std::vector<double> resync_obs_errs;  // every step's, for the median
    for (const auto& ep : episodes) {
      for (size_t t = 0; t < ep["actions"].size(); ++t) {
        env->reset();
        env->set_state(ep["qpos_before"][t].get<std::vector<double>>(),
                       ep["qvel_before"][t].get<std::vector<double>>());
        const StepResult r = env->step(ep["actions"][t].get<std::vector<double>>());
        resync_obs_errs.push_back(max_abs_diff(r.obs, ep["obs"][t].get<std::vector<double>>()));
        resync_obs_err = std::max(resync_obs_err, resync_obs_errs.back());
        resync_reward_err =
            std::max(resync_reward_err, std::abs(r.reward - ep["rewards"][t].get<double>()));
      }
    }
    ASSERT_FALSE(obs_err.empty()) << env_name;
    std::nth_element(resync_obs_errs.begin(), resync_obs_errs.begin() + resync_obs_errs.size() / 2,
                     resync_obs_errs.end());
    const double resync_median = resync_obs_errs[resync_obs_errs.size() / 2];
    auto at = [](const std::vector<double>& e, size_t t) { return t < e.size() ? e[t] : NAN; };
    double worst_obs = 0;
    for (double e : obs_err) worst_obs = std::max(worst_obs, e);
    double worst_obs_100 = 0, worst_reward_100 = 0;
    for (size_t t = 0; t < std::min<size_t>(obs_err.size(), 100); ++t) {
      worst_obs_100 = std::max(worst_obs_100, obs_err[t]);
      worst_reward_100 = std::max(worst_reward_100, reward_err[t]);
    }
    std::printf(
        "fidelity %-14s episodes %3zu steps %6zu | max|obs err| step1 %.3g step10 %.3g step100 "
        "%.3g steps1-100 %.3g any %.3g | max|reward err| step1 %.3g step100 %.3g steps1-100 %.3g "
        "| terminations agree %zu/%zu | re-synced one-step max|obs err| %.3g (median %.3g) "
        "max|reward err| %.3g\n",
        env_name.c_str(), episodes.size(), steps_compared, at(obs_err, 0), at(obs_err, 9),
        at(obs_err, 99), worst_obs_100, worst_obs, at(reward_err, 0), at(reward_err, 99),
        worst_reward_100, terminations_agree, terminations, resync_obs_err, resync_median,
        resync_reward_err);
    EXPECT_LT(obs_err[0], tolerance_first_step) << env_name;
    EXPECT_LT(reward_err[0], tolerance_first_step) << env_name;
    if (tolerance_open_loop >= 0) {
      EXPECT_LT(worst_obs_100, tolerance_open_loop) << env_name;
      EXPECT_LT(worst_reward_100, tolerance_open_loop) << env_name;
      EXPECT_EQ(terminations_agree, terminations) << env_name;
    }
  }
}

TEST(EnvFidelity, MatchesTheCommittedGymnasiumTraces) {
  check_against_trace(minrnn::testing::source_dir() + "/tests/envs/data/gymnasium-traces.json");
}

TEST(EnvFidelitySlow, MatchesGymnasiumTraces) {
  const char* path = std::getenv("MINRNN_FIDELITY_TRACE");
  if (path == nullptr)
    GTEST_SKIP() << "MINRNN_FIDELITY_TRACE not set (see scripts/fidelity_gymnasium.py)";
  check_against_trace(path);
}

}  // namespace
}  // namespace minrnn::envs
