#!/usr/bin/env python3
"""Minari datasets both ways, with the real `minari` package (run by tests/python/run.sh).

1. Python -> minrnn: Python's minari.DataCollector records Hopper-v5 episodes (time limit 40, so
   both terminations and truncations occur; eval_env Hopper-v5 with its 1000-step limit; reference
   scores of its own), and a second dataset on Walker2d-v5 with constructor options. `minrnn data
   inspect --json` must report what numpy reads from the same file: steps, episodes, flags,
   returns, sums of every field, the env to evaluate in (id, version, options, source) and the
   reference scores.
2. minrnn -> Python: `minrnn collect hopper-v5 random --format minari` writes a dataset that
   minari.load_dataset opens: Gymnasium's spaces, env_spec and eval_env_spec (recover_environment
   makes Hopper-v5), episodes of T+1 observations, the reference scores (get_normalized_score).
   Then Gymnasium's own Hopper-v5, set to each recorded state, must reproduce the recorded
   rewards, next observations and terminations: v5's reward (no healthy reward on the
   terminating step) included.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

warnings.filterwarnings("ignore")

FAILURES = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        FAILURES.append(what)


def close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def minrnn(binary, *args, env=None):
    result = subprocess.run([binary, *args], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"minrnn {' '.join(args)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result.stdout


def numpy_summary(dataset):
    """What minrnn's inspect reports, computed from the episodes Python's minari reads."""
    obs_sum = act_sum = rew_sum = next_sum = 0.0
    steps = terminals = timeouts = 0
    returns = []
    for ep in dataset.iterate_episodes():
        obs = np.asarray(ep.observations, dtype=np.float32)  # minrnn keeps float32
        T = len(ep.rewards)
        steps += T
        obs_sum += float(obs[:-1].astype(np.float64).sum())
        next_sum += float(obs[1:].astype(np.float64).sum())
        act_sum += float(np.asarray(ep.actions, dtype=np.float32).astype(np.float64).sum())
        rewards = np.asarray(ep.rewards, dtype=np.float32).astype(np.float64)
        rew_sum += float(rewards.sum())
        returns.append(float(rewards.sum()))
        terminals += int(np.sum(ep.terminations))
        timeouts += int(np.sum(ep.truncations))
    return dict(steps=steps, episodes=len(returns), terminals=terminals, timeouts=timeouts,
                returns=returns, observations=obs_sum, next_observations=next_sum,
                actions=act_sum, rewards=rew_sum)


def compare_inspect(inspect, summary, label):
    check(inspect["steps"] == summary["steps"], f"{label}: steps {inspect['steps']} == {summary['steps']}")
    check(inspect["episodes"] == summary["episodes"],
          f"{label}: episodes {inspect['episodes']} == {summary['episodes']}")
    check(inspect["terminals"] == summary["terminals"] and inspect["timeouts"] == summary["timeouts"],
          f"{label}: terminals/timeouts {inspect['terminals']}/{inspect['timeouts']} == "
          f"{summary['terminals']}/{summary['timeouts']}")
    check(inspect["dropped_tail_steps"] == 0, f"{label}: no dropped tail")
    r = summary["returns"]
    check(close(inspect["return"]["min"], min(r)) and close(inspect["return"]["max"], max(r))
          and close(inspect["return"]["mean"], float(np.mean(r))), f"{label}: return min/mean/max")
    for key in ("observations", "next_observations", "actions", "rewards"):
        check(close(inspect["checksums"][key], summary[key], 1e-9),
              f"{label}: sum of {key} {inspect['checksums'][key]!r} == {summary[key]!r}")


def python_to_minrnn(binary, root):
    import gymnasium as gym
    import minari

    # Hopper-v5 with a 40-step time limit: episodes end by falls and by truncation.
    env = minari.DataCollector(gym.make("Hopper-v5", max_episode_steps=40), record_infos=False)
    env.action_space.seed(1)
    for episode in range(12):
        env.reset(seed=episode)
        while True:
            _, _, terminated, truncated, _ = env.step(0.3 * env.action_space.sample())
            if terminated or truncated:
                break
    env.create_dataset(dataset_id="python/hopper/random-v0", eval_env="Hopper-v5",
                       ref_min_score=-19.5, ref_max_score=3300.25, algorithm_name="random",
                       author="minrnn tests", author_email="-", code_permalink="-",
                       description="tests/python/minari_roundtrip.py")
    dataset = minari.load_dataset("python/hopper/random-v0")
    summary = numpy_summary(dataset)
    check(summary["terminals"] > 0 and summary["timeouts"] > 0,
          f"python data has both ends ({summary['terminals']} falls, {summary['timeouts']} truncations)")

    out = json.loads(minrnn(binary, "data", "inspect", "python/hopper/random-v0", "--json"))
    compare_inspect(out, summary, "python->minrnn hopper")
    check(out["format"] == "minari", "format minari")
    check(out["env_id"] == "Hopper-v5" and out["env_version"] == 5, f"env {out['env_id']} v{out['env_version']}")
    check(out["env_source"] == "metadata.json eval_env_spec", f"env from {out['env_source']}")
    check(out["env_name"] == "hopper-v5", f"canonical env {out['env_name']}")
    check(out["time_limit"] == 1000, f"time limit of the eval env: {out['time_limit']}")
    n = out["normalized_return"]
    check(n["ref_min"] == -19.5 and n["ref_max"] == 3300.25
          and n["ref_source"] == "metadata.json ref_min_score/ref_max_score",
          f"reference scores {n['ref_min']}, {n['ref_max']} ({n['ref_source']})")
    expected = minari.get_normalized_score(dataset, np.array(summary["returns"])) * 100
    check(close(n["mean"], float(expected.mean())), f"normalized mean {n['mean']} == minari's {expected.mean()}")
    check(out["minari"]["observation_space"]["shape"] == [11]
          and out["minari"]["action_space"]["dtype"] == "float32", "spaces read")

    # Constructor options recorded in env_spec.kwargs become the env minrnn evaluates in.
    env = minari.DataCollector(gym.make("Walker2d-v5", healthy_reward=0.5, reset_noise_scale=0.02,
                                        max_episode_steps=30))
    for episode in range(3):
        env.reset(seed=100 + episode)
        while True:
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                break
    env.create_dataset(dataset_id="python/walker2d/options-v0", algorithm_name="random",
                       author="minrnn tests", author_email="-", code_permalink="-", description="-")
    walker = minari.load_dataset("python/walker2d/options-v0")
    out = json.loads(minrnn(binary, "data", "inspect", "python/walker2d/options-v0", "--json"))
    compare_inspect(out, numpy_summary(walker), "python->minrnn walker2d")
    spec = json.loads(out["env_name"])
    check(out["env_id"] == "Walker2d-v5" and out["env_source"] == "metadata.json env_spec",
          f"walker env {out['env_id']} from {out['env_source']}")
    check(spec.get("kwargs") == {"healthy_reward": 0.5, "reset_noise_scale": 0.02}
          and spec.get("max_episode_steps") == 30, f"walker options {out['env_name']}")


def minrnn_to_python(binary, root):
    import gymnasium as gym
    import minari

    printed = minrnn(binary, "collect", "hopper-v5", "random", "--steps", "3000", "--seed", "3",
                     "--format", "minari")
    print(printed.strip())
    dataset_id = "minrnn/hopper-v5/random-v0"
    check(dataset_id in minari.list_local_datasets(), f"{dataset_id} listed by minari")
    dataset = minari.load_dataset(dataset_id)
    spec = dataset.spec
    reference = gym.make("Hopper-v5")
    check(spec.env_spec.id == "Hopper-v5" and spec.env_spec.max_episode_steps == 1000,
          f"env_spec {spec.env_spec.id}, max_episode_steps {spec.env_spec.max_episode_steps}")
    check(dataset.observation_space == reference.observation_space,
          f"observation space {dataset.observation_space}")
    check(dataset.action_space == reference.action_space, f"action space {dataset.action_space}")
    check(spec.minari_version == "0.5.4", f"minari_version {spec.minari_version}")
    env = dataset.recover_environment()
    eval_env = dataset.recover_environment(eval_env=True)
    check(env.spec.id == "Hopper-v5" and eval_env.spec.id == "Hopper-v5",
          f"recover_environment: {env.spec.id}, eval {eval_env.spec.id}")
    meta = dataset.storage.metadata
    check(meta["ref_min_score"] == -20.272305 and meta["ref_max_score"] == 3234.3,
          f"reference scores {meta.get('ref_min_score')}, {meta.get('ref_max_score')} (D4RL's hopper)")
    summary = numpy_summary(dataset)
    check(dataset.total_episodes == summary["episodes"] and dataset.total_steps == summary["steps"],
          f"totals {dataset.total_episodes} episodes, {dataset.total_steps} steps")
    normalized = minari.get_normalized_score(dataset, np.array([-20.272305, 3234.3]))
    check(np.allclose(normalized, [0.0, 1.0]), f"get_normalized_score {normalized}")
    shapes_ok = True
    for ep in dataset.iterate_episodes():
        T = len(ep.rewards)
        shapes_ok &= ep.observations.shape == (T + 1, 11) and ep.actions.shape == (T, 3)
        shapes_ok &= ep.actions.dtype == np.float32 and ep.observations.dtype == np.float64
        shapes_ok &= bool(ep.terminations[-1] or ep.truncations[-1])
        shapes_ok &= not np.any(ep.terminations[:-1]) and not np.any(ep.truncations[:-1])
    check(shapes_ok, "every episode: T+1 observations, T actions, one end flag on its last step")
    check(len(dataset.sample_episodes(2)) == 2, "sample_episodes")

    out = json.loads(minrnn(binary, "data", "inspect", dataset_id, "--json"))
    compare_inspect(out, summary, "minrnn->python->minrnn")

    # Gymnasium's Hopper-v5 from each recorded state (x is not observed; it changes nothing but the
    # reward's displacement, measured from wherever x starts) must pay the recorded reward, reach
    # the recorded next observation and end where the data ends.
    sim = gym.make("Hopper-v5").unwrapped
    sim.reset(seed=0)
    first_obs_err = first_rew_err = 0.0
    rew_errs, obs_errs = [], []
    terminal_rew_err = 0.0
    agree = total = 0
    for ep in dataset.iterate_episodes():
        for t in range(len(ep.rewards)):
            o = ep.observations[t]
            if np.any(np.abs(o[5:]) >= 10):  # clipped velocities: not the state
                continue
            sim.set_state(np.concatenate([[0.0], o[:5]]), o[5:].copy())
            obs, reward, terminated, _, _ = sim.step(ep.actions[t].astype(np.float64))
            obs_err = float(np.max(np.abs(obs - ep.observations[t + 1])))
            rew_err = abs(reward - ep.rewards[t])
            rew_errs.append(rew_err)
            obs_errs.append(obs_err)
            total += 1
            agree += terminated == bool(ep.terminations[t])
            if t == 0:
                first_obs_err = max(first_obs_err, obs_err)
                first_rew_err = max(first_rew_err, rew_err)
            if ep.terminations[t] and terminated:
                terminal_rew_err = max(terminal_rew_err, rew_err)
    print(f"     re-synced steps {total}: first step max|obs err| {first_obs_err:.3g}, "
          f"max|reward err| {first_rew_err:.3g}; all steps median |reward err| "
          f"{np.median(rew_errs):.3g}, median |obs err| {np.median(obs_errs):.3g}; "
          f"terminating steps max|reward err| {terminal_rew_err:.3g}; terminations agree "
          f"{agree}/{total}")
    # The first step (in the air) agrees to float32 storage. Later steps touch the floor, where
    # MuJoCo 2.2.2 (minrnn here) and the wheel's 4.0 solve contacts slightly differently: the
    # re-synced one-step median is 8e-3 in an observation, 3e-4 in the reward, the same as
    # scripts/fidelity_gymnasium.py measures without any file in between (docs/envs.md); with one
    # MuJoCo on both sides it is 1e-15.
    check(first_obs_err < 1e-5 and first_rew_err < 1e-5,
          "first steps: Gymnasium reproduces minrnn's observation and reward (< 1e-5)")
    check(np.median(rew_errs) < 5e-3 and np.median(obs_errs) < 0.05,
          "all steps: median errors within MuJoCo 2.2.2 vs 4.0's (reward < 5e-3, obs < 0.05)")
    check(terminal_rew_err < 0.5,
          "terminating steps pay no healthy reward in both (v4 semantics would be off by 1.0)")
    check(agree >= 0.98 * total, "terminations agree on >= 98% of steps")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minrnn", required=True, help="the minrnn binary")
    args = parser.parse_args()
    binary = os.path.abspath(args.minrnn)
    with tempfile.TemporaryDirectory(prefix="minrnn_minari_") as root:
        os.environ["MINARI_DATASETS_PATH"] = root
        os.chdir(root)  # minrnn collect's SAC work dirs and data/ land here, not in the clone
        import minari
        import gymnasium
        import mujoco
        print(f"minari {minari.__version__}, gymnasium {gymnasium.__version__}, "
              f"mujoco (python) {mujoco.__version__}; datasets in {root}")
        python_to_minrnn(binary, root)
        minrnn_to_python(binary, root)
    if FAILURES:
        sys.exit(f"{len(FAILURES)} check(s) failed:\n  " + "\n  ".join(FAILURES))
    print("all checks passed")


if __name__ == "__main__":
    main()
