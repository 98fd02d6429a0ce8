// The three locomotion environments: compiled model, observation layout, reward terms, health
// predicates at their boundaries, reset noise, determinism, time limit, bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "envs/locomotion.h"
#include "envs/registry.h"
#include "envs/rng.h"

namespace minrnn::envs {
namespace {

const std::vector<std::string> kEnvs = {"halfcheetah", "hopper", "walker2d"};

double body_mass(const mjModel* m, const char* name) {
  const int id = mj_name2id(m, mjOBJ_BODY, name);
  EXPECT_GE(id, 0) << name;
  return id >= 0 ? m->body_mass[id] : -1;
}

TEST(Locomotion, CompiledBodyMassesMatchReference) {
  const std::map<std::string, std::map<std::string, double>> expected = {
      {"halfcheetah",
       {{"torso", 6.25021},
        {"bthigh", 1.54351},
        {"bshin", 1.58745},
        {"bfoot", 1.0954},
        {"fthigh", 1.43808},
        {"fshin", 1.20084},
        {"ffoot", 0.884519}}},
      {"hopper", {{"torso", 3.66519}, {"thigh", 4.05789}, {"leg", 2.78136}, {"foot", 5.31557}}},
      {"walker2d",
       {{"torso", 3.66519},
        {"thigh", 4.05789},
        {"leg", 2.78136},
        {"foot", 3.16673},
        {"thigh_left", 4.05789},
        {"leg_left", 2.78136},
        {"foot_left", 3.16673}}},
  };
  for (const auto& [env_name, masses] : expected) {
    LocomotionEnv env(env_name);
    double total = 0;
    for (const auto& [body, mass] : masses) {
      EXPECT_NEAR(body_mass(env.model(), body.c_str()), mass, 1e-4) << env_name << "/" << body;
      total += mass;
    }
    EXPECT_EQ(env.model()->nbody, static_cast<int>(masses.size()) + 1) << env_name;  // + world
    if (env_name == "halfcheetah") {
      EXPECT_NEAR(total, 14.0, 1e-4);
    }
  }
}

TEST(Locomotion, ModelMatchesSpec) {
  for (const auto& name : kEnvs) {
    LocomotionEnv env(name);
    const EnvSpec& s = env.spec();
    EXPECT_EQ(env.model()->nq, s.nq);
    EXPECT_EQ(env.model()->nv, s.nv);
    EXPECT_EQ(env.model()->nu, s.act_dim);
    EXPECT_DOUBLE_EQ(env.model()->opt.timestep * s.frame_skip, s.dt);
    EXPECT_EQ(s.obs_dim, s.nq - 1 + s.nv);
    for (int i = 0; i < env.model()->nu; ++i) {
      EXPECT_EQ(env.model()->actuator_ctrlrange[2 * i], -1.0);
      EXPECT_EQ(env.model()->actuator_ctrlrange[2 * i + 1], 1.0);
    }
  }
  EXPECT_EQ(locomotion_task("hopper").spec.obs_dim, 11);
  EXPECT_EQ(locomotion_task("halfcheetah").spec.act_dim, 6);
  LocomotionEnv hopper("hopper");
  const std::vector<double> qpos0(hopper.model()->qpos0, hopper.model()->qpos0 + 6);
  EXPECT_EQ(qpos0, (std::vector<double>{0, 1.25, 0, 0, 0, 0}));
  LocomotionEnv walker("walker2d");
  EXPECT_EQ(walker.model()->opt.integrator, mjINT_RK4);
  EXPECT_EQ(hopper.model()->opt.integrator, mjINT_RK4);
  LocomotionEnv cheetah("halfcheetah");
  EXPECT_EQ(cheetah.model()->opt.integrator, mjINT_EULER);
}

TEST(Locomotion, ObservationLayoutAndVelocityClipping) {
  for (const auto& name : kEnvs) {
    LocomotionEnv env(name);
    const int nq = env.spec().nq, nv = env.spec().nv;
    std::vector<double> qpos(nq), qvel(nv);
    for (int i = 0; i < nq; ++i) qpos[i] = 0.01 * (i + 1);
    qpos[1] = 1.2;
    for (int i = 0; i < nv; ++i) qvel[i] = (i % 2 ? -1 : 1) * 3.0 * (i + 1);  // up to +-27
    env.set_state(qpos, qvel);
    EXPECT_EQ(env.qpos(), qpos);
    EXPECT_EQ(env.qvel(), qvel);
    const auto obs = env.observation();
    ASSERT_EQ(static_cast<int>(obs.size()), env.spec().obs_dim) << name;
    for (int i = 1; i < nq; ++i) EXPECT_EQ(obs[i - 1], qpos[i]) << name << " qpos " << i;
    const bool clipped = name != "halfcheetah";
    for (int i = 0; i < nv; ++i) {
      const double want = clipped ? std::clamp(qvel[i], -10.0, 10.0) : qvel[i];
      EXPECT_EQ(obs[nq - 1 + i], want) << name << " qvel " << i;
    }
  }
}

TEST(Locomotion, RewardDecompositionOnConstructedState) {
  for (const auto& name : kEnvs) {
    LocomotionEnv env(name);
    const int nq = env.spec().nq, nv = env.spec().nv;
    std::vector<double> qpos(env.model()->qpos0, env.model()->qpos0 + nq), qvel(nv, 0.0);
    qpos[0] = 0.3;
    qvel[0] = 1.5;  // moving forward
    env.set_state(qpos, qvel);
    std::vector<double> action(env.spec().act_dim);
    for (size_t i = 0; i < action.size(); ++i) action[i] = (i % 2 ? -2.5 : 0.5);  // some clipped
    const StepResult r = env.step(action);
    const double x_after = env.qpos()[0];
    const double vx = (x_after - 0.3) / env.spec().dt;
    double sum_sq = 0;  // on the action as given: Gymnasium charges -2.5, not its clip
    for (double a : action) sum_sq += a * a;
    const double weight = name == "halfcheetah" ? 0.1 : 1e-3;
    const double healthy = name == "halfcheetah" ? 0.0 : 1.0;
    EXPECT_GT(x_after, 0.3) << name;
    EXPECT_NEAR(r.x_velocity, vx, 1e-12) << name;
    EXPECT_NEAR(r.ctrl_cost, weight * sum_sq, 1e-15) << name;
    EXPECT_EQ(r.healthy_reward, healthy) << name;
    EXPECT_NEAR(r.reward, vx + healthy - weight * sum_sq, 1e-12) << name;
    EXPECT_FALSE(r.terminated) << name;
    EXPECT_EQ(r.mujoco_warnings, 0);
    // Clipping happens before the physics: an out-of-range action steps exactly like its clip.
    LocomotionEnv twin(name);
    twin.set_state(qpos, qvel);
    std::vector<double> clipped = action;
    for (double& a : clipped) a = std::clamp(a, -1.0, 1.0);
    EXPECT_EQ(twin.step(clipped).obs, r.obs) << name;
  }
}

TEST(Locomotion, HopperHealthIsStrictAtEveryBoundary) {
  const std::vector<double> qvel(6, 0.0);
  auto qpos_with = [](double z, double angle) { return std::vector<double>{0, z, angle, 0, 0, 0}; };
  EXPECT_TRUE(hopper_is_healthy(qpos_with(1.25, 0.0), qvel));
  EXPECT_FALSE(hopper_is_healthy(qpos_with(0.7, 0.0), qvel));
  EXPECT_TRUE(hopper_is_healthy(qpos_with(std::nextafter(0.7, 1.0), 0.0), qvel));
  EXPECT_FALSE(hopper_is_healthy(qpos_with(1.25, 0.2), qvel));
  EXPECT_FALSE(hopper_is_healthy(qpos_with(1.25, -0.2), qvel));
  EXPECT_TRUE(hopper_is_healthy(qpos_with(1.25, std::nextafter(0.2, 0.0)), qvel));
  EXPECT_TRUE(hopper_is_healthy(qpos_with(1.25, std::nextafter(-0.2, 0.0)), qvel));
  EXPECT_TRUE(hopper_is_healthy(qpos_with(1000.0, 0.0), qvel));  // z has no upper bound
  // State range: qpos[2:] and qvel strictly inside (-100, 100); qpos[0] is free.
  auto qpos = qpos_with(1.25, 0.0);
  qpos[0] = 500;
  EXPECT_TRUE(hopper_is_healthy(qpos, qvel));
  qpos = qpos_with(1.25, 0.0);
  qpos[4] = 100.0;
  EXPECT_FALSE(hopper_is_healthy(qpos, qvel));
  qpos[4] = std::nextafter(100.0, 0.0);
  EXPECT_TRUE(hopper_is_healthy(qpos, qvel));
  for (int i = 0; i < 6; ++i) {
    auto v = qvel;
    v[i] = -100.0;
    EXPECT_FALSE(hopper_is_healthy(qpos_with(1.25, 0.0), v)) << i;
    v[i] = std::nextafter(-100.0, 0.0);
    EXPECT_TRUE(hopper_is_healthy(qpos_with(1.25, 0.0), v)) << i;
    v[i] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_FALSE(hopper_is_healthy(qpos_with(1.25, 0.0), v)) << i;
  }
  qpos = qpos_with(1.25, 0.0);
  qpos[0] = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(hopper_is_healthy(qpos, qvel));
  EXPECT_THROW(hopper_is_healthy(std::vector<double>(5), qvel), std::invalid_argument);
}

TEST(Locomotion, Walker2dHealthIsStrictAtEveryBoundary) {
  const std::vector<double> qvel(9, 0.0);
  auto qpos_with = [](double z, double angle) {
    std::vector<double> q(9, 0.0);
    q[1] = z;
    q[2] = angle;
    return q;
  };
  EXPECT_TRUE(walker2d_is_healthy(qpos_with(1.25, 0.0), qvel));
  EXPECT_FALSE(walker2d_is_healthy(qpos_with(0.8, 0.0), qvel));
  EXPECT_TRUE(walker2d_is_healthy(qpos_with(std::nextafter(0.8, 1.0), 0.0), qvel));
  EXPECT_FALSE(walker2d_is_healthy(qpos_with(2.0, 0.0), qvel));
  EXPECT_TRUE(walker2d_is_healthy(qpos_with(std::nextafter(2.0, 0.0), 0.0), qvel));
  EXPECT_FALSE(walker2d_is_healthy(qpos_with(1.25, 1.0), qvel));
  EXPECT_FALSE(walker2d_is_healthy(qpos_with(1.25, -1.0), qvel));
  EXPECT_TRUE(walker2d_is_healthy(qpos_with(1.25, std::nextafter(1.0, 0.0)), qvel));
  EXPECT_TRUE(walker2d_is_healthy(qpos_with(1.25, std::nextafter(-1.0, 0.0)), qvel));
  // No state-range check for walker2d (gym v2-v4).
  std::vector<double> fast(9, 500.0);
  EXPECT_TRUE(walker2d_is_healthy(qpos_with(1.25, 0.0), fast));
}

TEST(Locomotion, TerminationIsCheckedAfterTheStepAndStillPaysHealthyReward) {
  LocomotionEnv env("hopper");
  // Torso tilted beyond 0.2 rad: the step cannot bring it back within one env step.
  env.set_state({0, 1.25, 0.5, 0, 0, 0}, std::vector<double>(6, 0.0));
  const StepResult r = env.step({0, 0, 0});
  EXPECT_TRUE(r.terminated);
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.healthy_reward, 1.0);
  EXPECT_NEAR(r.reward, r.x_velocity + 1.0, 1e-12);
  EXPECT_THROW(env.step({0, 0, 0}), std::logic_error);
  env.reset();
  EXPECT_NO_THROW(env.step({0, 0, 0}));
}

TEST(Locomotion, HalfCheetahIsTruncatedAtTheTimeLimitNeverTerminated) {
  LocomotionEnv env("halfcheetah", 3);
  const std::vector<double> action = {0.3, -0.2, 0.1, -0.5, 0.4, 0.0};
  for (int t = 1; t <= 1000; ++t) {
    const StepResult r = env.step(action);
    ASSERT_FALSE(r.terminated) << t;
    ASSERT_EQ(r.truncated, t == 1000) << t;
    ASSERT_EQ(env.elapsed_steps(), t);
  }
  EXPECT_THROW(env.step(action), std::logic_error);
  env.reset();
  EXPECT_EQ(env.elapsed_steps(), 0);
}

TEST(Locomotion, ResetNoiseHasTheDocumentedRanges) {
  for (const auto& name : kEnvs) {
    LocomotionEnv env(name);
    const double sq = name == "halfcheetah" ? 0.1 : 0.005;
    double max_qvel = 0;
    for (int episode = 0; episode < 200; ++episode) {
      env.reset(episode);
      const auto qpos = env.qpos(), qvel = env.qvel();
      for (int i = 0; i < env.spec().nq; ++i) {
        ASSERT_LE(std::abs(qpos[i] - env.model()->qpos0[i]), sq) << name;
      }
      for (double v : qvel) max_qvel = std::max(max_qvel, std::abs(v));
      ASSERT_EQ(env.observation(), env.reset(episode)) << name;
    }
    if (name == "halfcheetah") {
      EXPECT_GT(max_qvel, 0.2);  // 0.1 * N(0,1): 1800 draws exceed 2 sigma somewhere
    } else {
      EXPECT_LE(max_qvel, 0.005);
      EXPECT_GT(max_qvel, 0.004);
    }
  }
}

std::vector<std::vector<double>> rollout(LocomotionEnv& env, int64_t seed, int steps) {
  std::vector<std::vector<double>> trace = {env.reset(seed)};
  Rng actions(99);
  for (int t = 0; t < steps; ++t) {
    std::vector<double> a(env.spec().act_dim);
    for (double& x : a) x = actions.uniform(-1, 1);
    const StepResult r = env.step(a);
    trace.push_back(r.obs);
    trace.back().push_back(r.reward);
    if (r.terminated || r.truncated) break;
  }
  return trace;
}

TEST(Locomotion, SameSeedSameEpisode) {
  for (const auto& name : kEnvs) {
    LocomotionEnv a(name, 0), b(name, 12345);
    EXPECT_EQ(rollout(a, 7, 100), rollout(b, 7, 100)) << name;
    EXPECT_NE(rollout(a, 7, 5), rollout(b, 8, 5)) << name;
    // Without a seed, reset continues the generator: a fresh env with the same construction
    // seed sees the same sequence of episodes.
    LocomotionEnv c(name, 5), d(name, 5);
    const auto first = c.reset();
    EXPECT_EQ(first, d.reset());
    EXPECT_NE(first, c.reset());
    LocomotionEnv e(name, 5);
    EXPECT_EQ(e.observation(), LocomotionEnv(name, 5).observation());
  }
}

TEST(Locomotion, BadActionsAreRejectedAndLeaveTheStateUntouched) {
  LocomotionEnv env("walker2d", 1);
  env.step(std::vector<double>(6, 0.1));
  const auto qpos = env.qpos(), qvel = env.qvel();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THROW(env.step(std::vector<double>(5, 0.0)), std::invalid_argument);
  EXPECT_THROW(env.step(std::vector<double>(7, 0.0)), std::invalid_argument);
  EXPECT_THROW(env.step({0, 0, nan, 0, 0, 0}), std::invalid_argument);
  EXPECT_THROW(env.step({0, 0, 0, 0, 0, -inf}), std::invalid_argument);
  EXPECT_EQ(env.qpos(), qpos);
  EXPECT_EQ(env.qvel(), qvel);
  EXPECT_EQ(env.elapsed_steps(), 1);
  try {
    env.step({0, 0, nan, 0, 0, 0});
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("action[2]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(env.set_state(std::vector<double>(8), std::vector<double>(9)),
               std::invalid_argument);
}

TEST(Locomotion, MujocoWarningsAreCounted) {
  LocomotionEnv env("hopper");
  std::vector<double> qvel(6, 0.0);
  qvel[3] = 1e12;  // beyond MuJoCo's mjMAXVAL: a bad-qvel warning and an internal reset
  env.set_state({0, 1.25, 0, 0, 0, 0}, qvel);
  const StepResult r = env.step({0, 0, 0});
  EXPECT_GT(r.mujoco_warnings, 0);
  EXPECT_EQ(env.total_mujoco_warnings(), r.mujoco_warnings);
  env.reset();
  EXPECT_EQ(env.step({0, 0, 0}).mujoco_warnings, 0);
}

TEST(Rng, TransformsArePinnedToTheStandardEngineOutput) {
  // The C++ standard fixes mt19937_64's 10000th output for the default seed 5489.
  Rng rng(5489);
  for (int i = 0; i < 9999; ++i) rng.uniform01();
  EXPECT_EQ(rng.uniform01(), static_cast<double>(9981545732273789042ull >> 11) * 0x1.0p-53);
  Rng gen(1);
  double sum = 0, sum_sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = gen.normal();
    sum += x;
    sum_sq += x * x;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / n, 1.0, 0.02);
}

// A fatal MuJoCo error (mj_makeData out of memory) exits with minrnn's message on stderr, where
// MuJoCo's own handler printed "Press Enter to exit ..." and waited on stdin: a Slurm job or a
// sweep's child hung there (found by an audit, 2026-11-29, under `ulimit -v`).
TEST(LocomotionDeathTest, AFatalMujocoErrorExitsAtOnceWithAMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto env = make_env("hopper", 0);
        mju_error("Could not allocate memory");
      },
      ::testing::ExitedWithCode(1), "minrnn: error: MuJoCo: Could not allocate memory");
}

}  // namespace
}  // namespace minrnn::envs
