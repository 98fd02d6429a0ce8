// Gymnasium versions and constructor options: v4 (= gym v2/v3, D4RL) against v5 (Minari), ids,
// env_spec JSON, the options we implement and the ones we refuse by name.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "envs/registry.h"

namespace minrnn::envs {
namespace {

const std::vector<std::string> kEnvs = {"halfcheetah", "hopper", "walker2d"};

std::string error_of(const std::string& name) {
  try {
    make_env(name);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

void expect_error(const std::string& name, const std::vector<std::string>& parts) {
  const std::string what = error_of(name);
  for (const auto& part : parts) EXPECT_NE(what.find(part), std::string::npos) << what;
}

TEST(EnvVersions, NamesMapToTheirVersionsSemantics) {
  struct Case {
    std::string name, id, canonical;
    int version;
  };
  const std::vector<Case> cases = {
      {"hopper", "Hopper-v4", "hopper", 4},
      {"hopper-v2", "Hopper-v4", "hopper", 4},
      {"Hopper-v3", "Hopper-v4", "hopper", 4},
      {"Hopper-v4", "Hopper-v4", "hopper", 4},
      {"hopper-medium-v2", "Hopper-v4", "hopper", 4},
      {"Hopper-v5", "Hopper-v5", "hopper-v5", 5},
      {"halfcheetah-v5", "HalfCheetah-v5", "halfcheetah-v5", 5},
      {"HalfCheetah-v4", "HalfCheetah-v4", "halfcheetah", 4},
      {"Walker2d-v5", "Walker2d-v5", "walker2d-v5", 5},
      {"walker2d-expert-v2", "Walker2d-v4", "walker2d", 4},
      {R"({"id": "Hopper-v5"})", "Hopper-v5", "hopper-v5", 5},
      {R"({"id": "Walker2d-v3", "kwargs": {}})", "Walker2d-v4", "walker2d", 4},
  };
  for (const auto& c : cases) {
    const ResolvedEnv r = resolve_env(c.name);
    EXPECT_EQ(r.task.spec.id, c.id) << c.name;
    EXPECT_EQ(r.task.spec.version, c.version) << c.name;
    EXPECT_EQ(r.canonical, c.canonical) << c.name;
    EXPECT_EQ(canonical_env_name(r.canonical), c.canonical) << c.name;
    const auto env = make_env(c.name, 3);
    EXPECT_EQ(env->spec().id, c.id);
    EXPECT_EQ(static_cast<int>(env->reset(1).size()), env->spec().obs_dim);
  }
  expect_error("Hopper-v6", {"'Hopper-v6'", "v5", "not v6"});
  expect_error("walker2d-v0", {"'walker2d-v0'", "not v0"});
}

TEST(EnvVersions, Walker2dV5DiffersFromV4OnlyInTheRightFootFriction) {
  LocomotionEnv v4("walker2d-v4"), v5("walker2d-v5");
  const mjModel* a = v4.model();
  const mjModel* b = v5.model();
  ASSERT_EQ(a->ngeom, b->ngeom);
  const int right = mj_name2id(a, mjOBJ_GEOM, "foot_geom");
  const int left = mj_name2id(a, mjOBJ_GEOM, "foot_left_geom");
  ASSERT_GE(right, 0);
  ASSERT_GE(left, 0);
  EXPECT_EQ(a->geom_friction[3 * right], 0.9);
  EXPECT_EQ(b->geom_friction[3 * right], 1.9);
  EXPECT_EQ(a->geom_friction[3 * left], 1.9);
  EXPECT_EQ(b->geom_friction[3 * left], 1.9);
  for (int g = 0; g < a->ngeom; ++g) {
    for (int k = 0; k < 3; ++k) {
      if (g == right && k == 0) continue;
      EXPECT_EQ(a->geom_friction[3 * g + k], b->geom_friction[3 * g + k]) << g << "/" << k;
    }
    for (int k = 0; k < 3; ++k) EXPECT_EQ(a->geom_size[3 * g + k], b->geom_size[3 * g + k]);
  }
  for (int i = 0; i < a->nbody; ++i) EXPECT_EQ(a->body_mass[i], b->body_mass[i]);
  // Hopper and HalfCheetah: Gymnasium 1.x loads one XML for v4 and v5; so do we.
  for (const std::string family : {"hopper", "halfcheetah"}) {
    EXPECT_EQ(resolve_env(family + "-v5").task.model, resolve_env(family).task.model);
  }
}

// The state after the step is unhealthy for both versions: v4 pays the healthy reward on the
// terminating step, v5 does not (Gymnasium's v5 changelog: "healthy_reward was given on every
// step (even if the Hopper was unhealthy), now it is only given when the Hopper is healthy").
TEST(EnvVersions, V5PaysTheHealthyRewardOnlyWhileHealthy) {
  for (const std::string family : {"hopper", "walker2d"}) {
    std::vector<StepResult> results;
    for (const std::string version : {"-v4", "-v5"}) {
      LocomotionEnv env(family + version);
      std::vector<double> qpos(env.spec().nq, 0.0), qvel(env.spec().nv, 0.0);
      qpos[1] = 1.25;
      qpos[2] = 1.5;  // tilted beyond both envs' angle range
      env.set_state(qpos, qvel);
      results.push_back(env.step(std::vector<double>(env.spec().act_dim, 0.0)));
      EXPECT_TRUE(results.back().terminated) << family << version;
    }
    EXPECT_EQ(results[0].healthy_reward, 1.0) << family;
    EXPECT_EQ(results[1].healthy_reward, 0.0) << family;
    EXPECT_NEAR(results[0].reward - results[1].reward, 1.0, 1e-12) << family;
    // While healthy both pay it.
    for (const std::string version : {"-v4", "-v5"}) {
      LocomotionEnv env(family + version, 2);
      const StepResult r = env.step(std::vector<double>(env.spec().act_dim, 0.0));
      EXPECT_FALSE(r.terminated);
      EXPECT_EQ(r.healthy_reward, 1.0) << family << version;
    }
  }
}

TEST(EnvVersions, SamePhysicsWhereTheModelIsTheSame) {
  // Hopper and HalfCheetah share the model between v4 and v5: same seed, same actions, same
  // observations; rewards differ only by the healthy reward of an unhealthy step.
  for (const std::string family : {"hopper", "halfcheetah"}) {
    LocomotionEnv a(family, 4), b(family + "-v5", 4);
    EXPECT_EQ(a.reset(11), b.reset(11));
    Rng rng(5);
    for (int t = 0; t < 200; ++t) {
      std::vector<double> action(a.spec().act_dim);
      for (double& x : action) x = rng.uniform(-1, 1);
      const StepResult ra = a.step(action), rb = b.step(action);
      ASSERT_EQ(ra.obs, rb.obs) << family << " step " << t;
      ASSERT_EQ(ra.terminated, rb.terminated);
      ASSERT_EQ(ra.reward - ra.healthy_reward, rb.reward - rb.healthy_reward);
      if (ra.terminated || ra.truncated) break;
    }
  }
}

TEST(EnvVersions, ConstructorOptionsFromAnEnvSpec) {
  // Rewards: weights.
  const ResolvedEnv w = resolve_env(
      R"({"id": "Hopper-v5", "kwargs": {"forward_reward_weight": 2.0, "ctrl_cost_weight": 0.5,
          "healthy_reward": 3.0}})");
  EXPECT_EQ(w.task.spec.id, "Hopper-v5");
  EXPECT_NE(w.canonical, "hopper-v5");
  EXPECT_EQ(resolve_env(w.canonical).canonical, w.canonical);  // the canonical form round-trips
  {
    LocomotionEnv env(w.canonical, 1);
    const StepResult r = env.step({0.5, -0.5, 1.0});
    EXPECT_NEAR(r.ctrl_cost, 0.5 * 1.5, 1e-15);
    EXPECT_EQ(r.healthy_reward, 3.0);
    EXPECT_NEAR(r.reward, 2.0 * r.x_velocity + 3.0 - 0.75, 1e-12);
  }
  // Observation with x, a frame skip, a time limit.
  {
    LocomotionEnv env(R"({"id": "Walker2d-v5", "max_episode_steps": 7, "kwargs":
        {"exclude_current_positions_from_observation": false, "frame_skip": 5}})");
    EXPECT_EQ(env.spec().obs_dim, 18);
    EXPECT_DOUBLE_EQ(env.spec().dt, 0.01);
    EXPECT_EQ(env.spec().frame_skip, 5);
    EXPECT_EQ(env.observation()[0], env.qpos()[0]);
    StepResult r;
    for (int t = 0; t < 7; ++t) r = env.step(std::vector<double>(6, 0.0));
    EXPECT_TRUE(r.truncated);
  }
  // Reset noise.
  {
    LocomotionEnv env(R"({"id": "HalfCheetah-v5", "kwargs": {"reset_noise_scale": 0.0}})");
    env.reset(3);
    EXPECT_EQ(env.qvel(), std::vector<double>(9, 0.0));
    EXPECT_EQ(env.qpos(), std::vector<double>(env.model()->qpos0, env.model()->qpos0 + 9));
  }
  // Health: ranges and terminate_when_unhealthy (then v4 and v5 both pay only while healthy).
  for (const std::string id : {"Hopper-v4", "Hopper-v5"}) {
    LocomotionEnv env(R"({"id": ")" + id +
                      R"(", "kwargs": {"terminate_when_unhealthy": false,
                      "healthy_angle_range": [-0.1, 0.1], "healthy_z_range": [0.7, Infinity]}})");
    env.set_state({0, 1.25, 0.15, 0, 0, 0}, std::vector<double>(6, 0.0));
    const StepResult r = env.step({0, 0, 0});
    EXPECT_FALSE(r.terminated) << id;
    EXPECT_EQ(r.healthy_reward, 0.0) << id;
  }
  // Rendering-only options are accepted, and change nothing.
  EXPECT_EQ(canonical_env_name(R"({"id": "Hopper-v5", "kwargs": {"render_mode": "rgb_array",
      "width": 64, "xml_file": "hopper.xml"}, "max_episode_steps": 1000, "order_enforce": true,
      "disable_env_checker": false, "additional_wrappers": [], "vector_entry_point": null,
      "entry_point": "gymnasium.envs.mujoco.hopper_v5:HopperEnv", "reward_threshold": 3800.0,
      "nondeterministic": false})"),
            "hopper-v5");
}

TEST(EnvVersions, OptionsWeDoNotImplementAreRefusedByName) {
  expect_error(R"({"id": "Hopper-v5", "kwargs": {"xml_file": "/home/me/my_hopper.xml"}})",
               {"env_spec.kwargs.xml_file", "my_hopper.xml", "custom model"});
  expect_error(R"({"id": "Walker2d-v5", "kwargs": {"xml_file": "walker2d.xml"}})",
               {"env_spec.kwargs.xml_file", "walker2d_v5.xml"});
  expect_error(R"({"id": "Hopper-v5", "kwargs": {"contact_cost_weight": 1.0}})",
               {"env_spec.kwargs.contact_cost_weight", "not an option of Hopper-v5"});
  expect_error(R"({"id": "Hopper-v4", "kwargs": {"frame_skip": 5}})",
               {"env_spec.kwargs.frame_skip", "Hopper-v4"});
  expect_error(R"({"id": "HalfCheetah-v5", "kwargs": {"healthy_reward": 1.0}})",
               {"env_spec.kwargs.healthy_reward", "HalfCheetah-v5"});
  expect_error(R"({"id": "Walker2d-v5", "kwargs": {"healthy_state_range": [-1, 1]}})",
               {"env_spec.kwargs.healthy_state_range"});
  expect_error(R"({"id": "Hopper-v5", "kwargs": {"terminate_when_unhealthy": "yes"}})",
               {"env_spec.kwargs.terminate_when_unhealthy", "\"yes\"", "true or false"});
  expect_error(R"({"id": "Hopper-v5", "kwargs": {"healthy_z_range": [1.0]}})",
               {"env_spec.kwargs.healthy_z_range"});
  expect_error(R"({"id": "Hopper-v5", "kwargs": {"reset_noise_scale": -1}})",
               {"env_spec.kwargs.reset_noise_scale", ">= 0"});
  expect_error(R"({"id": "Hopper-v5", "additional_wrappers": [{"name": "ClipAction",
                   "entry_point": "gymnasium.wrappers:ClipAction", "kwargs": {}}]})",
               {"env_spec.additional_wrappers", "ClipAction"});
  expect_error(R"({"id": "Hopper-v5", "entry_point": "my_envs:FastHopper"})",
               {"env_spec.entry_point", "my_envs:FastHopper", "HopperEnv"});
  expect_error(R"({"id": "Hopper-v5", "max_episode_steps": null})",
               {"env_spec.max_episode_steps", "time limit"});
  expect_error(R"({"id": "Ant-v5"})", {"env_spec.id", "Ant-v5"});
  expect_error(R"({"id": "Hopper-v6"})", {"env_spec.id", "Hopper-v6", "not v6"});
  expect_error(R"({"id": "Hopper"})", {"env_spec.id", "with a version"});
  expect_error(R"({"id": "dm_control/hopper-v0"})", {"env_spec.id", "namespaced"});
  expect_error(R"({"id": "Hopper-v5", "frobnicate": 1})", {"env_spec.frobnicate"});
  expect_error(R"({"kwargs": {}})", {"env_spec.id", "missing"});
  expect_error(R"({"id": "Hopper-v5",)", {"env_spec", "not valid JSON"});
  // The field's name is the caller's: a Minari dataset's eval_env_spec.
  try {
    resolve_env_spec(R"({"id": "Hopper-v5", "kwargs": {"foo": 1}})", "eval_env_spec");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("eval_env_spec.kwargs.foo = 1"), std::string::npos)
        << e.what();
  }
}

TEST(EnvVersions, ReferenceScoresAreD4rlsForEveryVersion) {
  for (const auto& family : kEnvs) {
    EXPECT_EQ(env_spec(family + "-v5").ref_min_score, env_spec(family).ref_min_score);
    EXPECT_EQ(env_spec(family + "-v5").ref_max_score, env_spec(family).ref_max_score);
  }
  EXPECT_NEAR(normalized_score(50.0, 0.0, 100.0), 50.0, 1e-12);
}

}  // namespace
}  // namespace minrnn::envs
