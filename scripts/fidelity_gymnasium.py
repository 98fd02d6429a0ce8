#!/usr/bin/env python3
"""Compare minrnn's environments with Gymnasium's v4 and v5 ones (optional; not in the default suite).

Records Gymnasium episodes (start qpos/qvel after a seeded reset, uniform random actions, the
observation, reward and termination after every step) to a JSON trace, then runs the C++ suite
EnvFidelitySlow with MINRNN_FIDELITY_TRACE pointing at it; that suite sets the same start state in
our env (`set_state`), applies the same actions and prints the max abs errors after 1, 10 and 100
steps (open loop), and the worst one-step error when our state is re-synced to Gymnasium's before
every step.

Two builds of our side:
  default        build/tests/test_envs: our envs on the project's MuJoCo (Debian's 2.2.2), so the
                 differences include MuJoCo's own from 2.2.2 to the wheel's version;
  --same-mujoco  our envs and that suite compiled against the MuJoCo inside the `mujoco` wheel
                 Gymnasium runs on (its headers and libmujoco.so): the same physics library on both
                 sides, so any difference is ours (model, reward, termination, observation, reset).
                 Then every step of the first 100 must agree to --open-loop-tolerance.

Setup: the venv of scripts/python_env.sh (pinned gymnasium[mujoco], outside the clone):
  python=$(bash scripts/python_env.sh)
  $python scripts/fidelity_gymnasium.py --build build [--versions 4,5] [--same-mujoco]
      [--action-scale 0.1] [--kwargs '{"terminate_when_unhealthy": false}']
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

FAMILIES = {"halfcheetah": "HalfCheetah", "hopper": "Hopper", "walker2d": "Walker2d"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def our_name(family, version, kwargs):
    """The name minrnn's make_env takes for Gymnasium's <Family>-v<version>(**kwargs)."""
    if not kwargs:
        return family if version == 4 else f"{family}-v{version}"
    return json.dumps({"id": f"{FAMILIES[family]}-v{version}", "kwargs": kwargs})


def record(gym_id, kwargs, episodes, steps, seed, action_scale):
    import gymnasium as gym
    import numpy as np

    env = gym.make(gym_id, **kwargs).unwrapped  # no TimeLimit/OrderEnforcing wrappers
    rng = np.random.default_rng(seed)
    out = []
    for ep in range(episodes):
        env.reset(seed=seed + ep)
        rec = {
            "qpos": env.data.qpos.tolist(),
            "qvel": env.data.qvel.tolist(),
            "actions": [], "obs": [], "rewards": [], "terminated": [],
            "qpos_before": [], "qvel_before": [],
        }
        for _ in range(steps):
            action = action_scale * rng.uniform(-1.0, 1.0, size=env.action_space.shape)
            rec["qpos_before"].append(env.data.qpos.tolist())
            rec["qvel_before"].append(env.data.qvel.tolist())
            obs, reward, terminated, _, _ = env.step(action)
            rec["actions"].append(action.tolist())
            rec["obs"].append(obs.tolist())
            rec["rewards"].append(float(reward))
            rec["terminated"].append(bool(terminated))
            if terminated:
                break
        out.append(rec)
    env.close()
    return out


def build_against_wheel(build_dir):
    """test_fidelity compiled with the wheel's MuJoCo headers and library; returns its path."""
    import mujoco

    wheel = os.path.dirname(mujoco.__file__)
    libs = sorted(glob.glob(os.path.join(wheel, "libmujoco.so*")))
    if not libs or not os.path.isdir(os.path.join(wheel, "include", "mujoco")):
        sys.exit(f"fidelity: no libmujoco.so or include/mujoco in {wheel}")
    out_dir = os.path.join(build_dir, "fidelity-mujoco-wheel")
    os.makedirs(out_dir, exist_ok=True)
    exe = os.path.join(out_dir, "test_fidelity")
    sources = sorted(glob.glob(os.path.join(ROOT, "envs", "*.cpp"))) + [
        os.path.join(ROOT, "io", "python_json.cpp"),
        os.path.join(ROOT, "tests", "envs", "test_fidelity.cpp"),
    ]
    command = ["g++", "-std=c++17", "-O2", f"-I{ROOT}", f"-I{os.path.join(wheel, 'include')}",
               *sources, "-o", exe, f"-L{wheel}", f"-l:{os.path.basename(libs[-1])}",
               f"-Wl,-rpath,{wheel}", "-lgtest_main", "-lgtest", "-lz", "-lpthread"]
    print(f"building {exe} against {libs[-1]} (mujoco {mujoco.__version__}) ...", flush=True)
    subprocess.run(command, check=True)
    return exe


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build", help="CMake build dir holding tests/test_envs")
    parser.add_argument("--versions", default="4,5", help="Gymnasium versions to compare (4, 5)")
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--action-scale", type=float, default=1.0,
                        help="actions ~ scale * U(-1, 1); small scales keep Hopper up longer")
    parser.add_argument("--kwargs", default="{}",
                        help="constructor options for every env, as JSON (both sides get them)")
    parser.add_argument("--same-mujoco", action="store_true",
                        help="build our side against the wheel's MuJoCo (see above)")
    parser.add_argument("--open-loop-tolerance", type=float, default=1e-9,
                        help="with --same-mujoco: max |error| over the first 100 steps")
    parser.add_argument("--trace", help="keep the JSON trace at this path")
    args = parser.parse_args()

    import gymnasium
    import mujoco

    kwargs = json.loads(args.kwargs)
    versions = [int(v) for v in args.versions.split(",")]
    envs = {}
    for version in versions:
        for family, gym_name in FAMILIES.items():
            extra = {k: v for k, v in kwargs.items()
                     if family != "halfcheetah" or not k.startswith(("healthy", "terminate"))}
            envs[our_name(family, version, extra)] = record(
                f"{gym_name}-v{version}", extra, args.episodes, args.steps, args.seed,
                args.action_scale)
    trace = {
        "command": "scripts/fidelity_gymnasium.py " + " ".join(sys.argv[1:]),
        "gymnasium": gymnasium.__version__,
        "mujoco": mujoco.__version__,
        "tolerance_first_step": 1e-6,
        "envs": envs,
    }
    if args.same_mujoco:
        trace["tolerance_open_loop"] = args.open_loop_tolerance
    path = args.trace or os.path.join(tempfile.mkdtemp(prefix="minrnn_fidelity_"), "trace.json")
    with open(path + ".tmp", "w") as f:
        json.dump(trace, f)
    os.replace(path + ".tmp", path)
    print(f"gymnasium {gymnasium.__version__}, mujoco (python) {mujoco.__version__}; trace {path}")

    if args.same_mujoco:
        test_exe = build_against_wheel(args.build)
    else:
        test_exe = os.path.join(args.build, "tests", "test_envs")
        if not os.path.exists(test_exe):
            sys.exit(f"fidelity: {test_exe} not found; build the test_envs target first")
    env = dict(os.environ, MINRNN_FIDELITY_TRACE=os.path.abspath(path))
    result = subprocess.run([test_exe, "--gtest_filter=EnvFidelitySlow.*"], env=env)
    sys.exit(result.returncode)


if __name__ == "__main__":
    main()
