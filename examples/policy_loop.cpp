// A trained minrnn policy inside your own control loop: the whole of what a C++ program needs.
//
//   build/examples/policy_loop RUN_DIR [--episodes N] [--seed S]
//
// Loads the run once, then for each episode: reset the policy, and every step ask it for an
// action, apply the action, and tell the policy the reward. Here the "plant" is the run's own
// MuJoCo environment from minrnn's envs library; in your program it is whatever you control.
// Episode i is seeded seed + i, as `minrnn eval` seeds it, so the returns printed here equal
// `minrnn eval RUN_DIR --episodes N --seed S` (tests/tools/cli_test.cpp checks that).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "envs/registry.h"
#include "infer/policy.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s RUN_DIR [--episodes N] [--seed S]\n", argv[0]);
    return 2;
  }
  const std::string run = argv[1];
  int episodes = 1;
  long seed = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--episodes") {
      episodes = std::atoi(argv[i + 1]);
    } else if (flag == "--seed") {
      seed = std::atol(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown option '%s'\n", flag.c_str());
      return 2;
    }
  }
  try {
    // One thread: a control loop at batch 1 gains nothing from more and pays their wake-ups.
    torch::set_num_threads(1);
    minrnn::rl::Policy policy = minrnn::rl::Policy::load(run);
    const std::string env_name = policy.agent().env;
    std::printf("policy: %s, %s engine, %s mode\n", run.c_str(),
                minrnn::rl::policy_engine_name(policy.engine()),
                minrnn::rl::eval_mode_name(policy.mode()));

    std::vector<double> micros;  // time of each act() call
    double sum_normalized = 0;
    for (int e = 0; e < episodes; ++e) {
      auto env = minrnn::envs::make_env(env_name, seed + e);
      std::vector<double> obs = env->reset(seed + e);
      policy.reset();  // a new episode, conditioned on the run's target return
      double episode_return = 0;
      int steps = 0;
      for (bool done = false; !done; ++steps) {
        const auto t0 = std::chrono::steady_clock::now();
        const std::vector<double> action = policy.act(obs);
        const auto t1 = std::chrono::steady_clock::now();
        micros.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());

        const auto step = env->step(action);  // your plant goes here
        policy.observe_reward(step.reward);
        episode_return += step.reward;
        obs = step.obs;
        done = step.terminated || step.truncated;
      }
      const double normalized = policy.agent().normalized(episode_return);
      sum_normalized += normalized;
      std::printf("episode %d: return %.6f over %d steps, normalized %.2f\n", e, episode_return,
                  steps, normalized);
    }
    std::sort(micros.begin(), micros.end());
    std::printf("mean normalized %.2f; act() median %.1f us, p99 %.1f us over %zu calls\n",
                sum_normalized / episodes, micros[micros.size() / 2],
                micros[std::min(micros.size() - 1, micros.size() * 99 / 100)], micros.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "policy_loop: %s\n", e.what());
    return 1;
  }
  return 0;
}
