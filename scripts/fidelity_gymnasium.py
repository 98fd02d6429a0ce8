#!/usr/bin/env python3
"""Compare minrnn's environments with Gymnasium's v4 ones (optional; not part of the default suite).

Records Gymnasium episodes (start qpos/qvel after a seeded reset, uniform random actions, the
observation, reward and termination after every step) to a JSON trace, then runs the C++ suite
EnvFidelitySlow with MINRNN_FIDELITY_TRACE pointing at it; that suite sets the same start state in
our env, applies the same actions and prints the max abs errors after 1, 10 and 100 steps (open
loop), and the worst one-step error when our state is re-synced to Gymnasium's before every step.

Setup (a venv of its own, outside the clone):
  python3 -m venv ~/.cache/minrnn/fidelity-venv
  ~/.cache/minrnn/fidelity-venv/bin/pip install "gymnasium[mujoco]"
Run from the repository root after building test_envs:
  ~/.cache/minrnn/fidelity-venv/bin/python scripts/fidelity_gymnasium.py --build build
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

GYM_IDS = {"halfcheetah": "HalfCheetah-v4", "hopper": "Hopper-v4", "walker2d": "Walker2d-v4"}


def record(env_name, episodes, steps, seed, action_scale):
    import gymnasium as gym
    import numpy as np

    env = gym.make(GYM_IDS[env_name]).unwrapped  # no TimeLimit/OrderEnforcing wrappers
    rng = np.random.default_rng(seed)
    out = []
    for ep in range(episodes):
        env.reset(seed=seed + ep)
        record = {
            "qpos": env.data.qpos.tolist(),
            "qvel": env.data.qvel.tolist(),
            "actions": [], "obs": [], "rewards": [], "terminated": [],
            "qpos_before": [], "qvel_before": [],
        }
        for _ in range(steps):
            action = action_scale * rng.uniform(-1.0, 1.0, size=env.action_space.shape)
            record["qpos_before"].append(env.data.qpos.tolist())
            record["qvel_before"].append(env.data.qvel.tolist())
            obs, reward, terminated, _, _ = env.step(action)
            record["actions"].append(action.tolist())
            record["obs"].append(obs.tolist())
            record["rewards"].append(float(reward))
            record["terminated"].append(bool(terminated))
            if terminated:
                break
        out.append(record)
    env.close()
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build", help="CMake build dir holding tests/test_envs")
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--action-scale", type=float, default=1.0,
                        help="actions ~ scale * U(-1, 1); small scales keep Hopper up longer")
    parser.add_argument("--trace", help="keep the JSON trace at this path")
    args = parser.parse_args()

    import gymnasium
    import mujoco

    trace = {
        "gymnasium": gymnasium.__version__,
        "mujoco": mujoco.__version__,
        "tolerance_first_step": 1e-6,
        "envs": {name: record(name, args.episodes, args.steps, args.seed, args.action_scale) for name in GYM_IDS},
    }
    path = args.trace or os.path.join(tempfile.mkdtemp(prefix="minrnn_fidelity_"), "trace.json")
    with open(path + ".tmp", "w") as f:
        json.dump(trace, f)
    os.replace(path + ".tmp", path)
    print(f"gymnasium {gymnasium.__version__}, mujoco (python) {mujoco.__version__}; trace {path}")

    test_exe = os.path.join(args.build, "tests", "test_envs")
    if not os.path.exists(test_exe):
        sys.exit(f"fidelity: {test_exe} not found; build the test_envs target first")
    env = dict(os.environ, MINRNN_FIDELITY_TRACE=os.path.abspath(path))
    result = subprocess.run([test_exe, "--gtest_filter=EnvFidelitySlow.*"], env=env)
    sys.exit(result.returncode)


if __name__ == "__main__":
    main()
