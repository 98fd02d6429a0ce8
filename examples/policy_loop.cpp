// A trained minrnn policy inside your own control loop: the whole of what a C++ program needs.
//
//   build/examples/policy_loop RUN_DIR [--episodes N] [--seed S]
//
// Built in minrnn's tree, or as a project of its own against the installed package
// (examples/CMakeLists.txt); either way it includes minrnn's headers alone, no LibTorch header.
// Loads the run once, then for each episode: reset the policy, and every step ask it for an
// action, apply the action, and tell the policy the reward. Here the "plant" is the run's own
// MuJoCo environment from minrnn's envs library; in your program it is whatever you control.
// Episode i is seeded seed + i, as `minrnn eval` seeds it, so the returns printed here are those
// of `minrnn eval RUN_DIR --episodes N --seed S`, though eval steps its episodes as one batch and
// this loop one at a time: the packed engine gives an episode the same bits in any batch
// (tests/tools/cli_test.cpp checks the printed digits).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/registry.h"
#include "infer/policy.h"

struct Options {
  std::string run;
  int episodes = 1;
  long long seed = 0;
};

// A whole number from `least` to `most` from the command line, or an error naming its flag: digits
// alone (strtoll would take " 2", "+2" and clamp 1e20 to its largest).
long long whole_number(const std::string& flag, const std::string& text, long long least,
                       long long most) {
  long long value = -1;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  const bool digits = !text.empty() && text[0] != '-';
  if (!digits || error != std::errc() || stop != end || value < least || value > most) {
    throw std::invalid_argument(flag + ": expected a whole number from " + std::to_string(least) +
                                " to " + std::to_string(most) + ", got '" + text + "'");
  }
  return value;
}

// Episodes and seeds in the ranges `minrnn eval` takes (its --episodes, its --seed), so that
// episode i's seed, seed + i, is one eval would give it. The largest seed is that of the
// evaluations during training of a run of the largest seed: 1 000 000 + 1 000 x 2^53.
Options parse_options(int argc, char** argv) {
  if (argc < 2) throw std::invalid_argument("no RUN_DIR given");
  Options o;
  o.run = argv[1];
  if (o.run.rfind("--", 0) == 0) throw std::invalid_argument("RUN_DIR comes first, then options");
  bool episodes_given = false, seed_given = false;
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag != "--episodes" && flag != "--seed") {
      throw std::invalid_argument("unknown option '" + flag + "'");
    }
    if (i + 1 == argc) throw std::invalid_argument(flag + ": no value given");
    bool& given = flag == "--episodes" ? episodes_given : seed_given;
    if (given) throw std::invalid_argument(flag + ": given twice");
    given = true;
    if (flag == "--episodes")
      o.episodes = static_cast<int>(whole_number(flag, argv[i + 1], 1, 1000000));
    if (flag == "--seed") o.seed = whole_number(flag, argv[i + 1], 0, 9007199254741992000LL);
  }
  return o;
}

// One episode of the loop: the return, with the time of each act() call appended to `micros`.
double run_episode(minrnn::rl::Policy& policy, long long seed, int* steps,
                   std::vector<double>& micros) {
  auto env = minrnn::envs::make_env(policy.env(), seed);
  std::vector<double> obs = env->reset(seed);
  policy.reset();  // a new episode, conditioned on the run's target return
  double episode_return = 0;
  *steps = 0;
  for (bool done = false; !done; ++*steps) {
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
  return episode_return;
}

int main(int argc, char** argv) {
  const char* usage = "usage: %s RUN_DIR [--episodes N] [--seed S]\n";
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::printf(usage, argv[0]);
      return 0;
    }
  }
  Options o;
  try {
    o = parse_options(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "policy_loop: %s\n", e.what());
    std::fprintf(stderr, usage, argv[0]);
    return 2;
  }
  try {
    minrnn::rl::PolicyOptions options;
    // One thread: a streaming step's products are too small to split (a Transformer's window,
    // re-encoded every step, runs faster on 2 to 4: PolicyOptions::threads).
    options.threads = 1;
    minrnn::rl::Policy policy = minrnn::rl::Policy::load(o.run, options);
    std::printf("policy: %s, %s engine, %s mode\n", o.run.c_str(),
                minrnn::rl::policy_engine_name(policy.engine()),
                minrnn::rl::eval_mode_name(policy.mode()));
    std::vector<double> micros;  // time of each act() call
    double sum_normalized = 0;
    for (int e = 0; e < o.episodes; ++e) {
      int steps = 0;
      const double episode_return = run_episode(policy, o.seed + e, &steps, micros);
      const double normalized = policy.normalized(episode_return);
      sum_normalized += normalized;
      std::printf("episode %d: return %.6f over %d steps, normalized %.2f\n", e, episode_return,
                  steps, normalized);
    }
    std::sort(micros.begin(), micros.end());
    std::printf("mean normalized %.2f; act() median %.1f us, p99 %.1f us over %zu calls\n",
                sum_normalized / o.episodes, micros[micros.size() / 2],
                micros[std::min(micros.size() - 1, micros.size() * 99 / 100)], micros.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "policy_loop: %s\n", e.what());
    return 1;
  }
  return 0;
}
