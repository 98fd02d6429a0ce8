#!/usr/bin/env python3
"""A run's TensorBoard event files, read by TensorBoard itself (run by tests/python/run.sh).

The real `minrnn` binary trains a tiny run. TensorBoard must show every row of metrics.csv and
evals.csv once, at its step, with its values (float32 of the CSV text):
1. after a kill -9 past a checkpoint and the resume that drops and redoes the rows after it,
2. after `--extend` from a final step off the evaluation cadence (whose evals.csv row goes),
with both of its readers: EventAccumulator (what `tensorboard --load_fast=false` and the Python API
use, checksums checked; it drops points at a SessionLog START) and the default fast loader (the
Rust data server, asked over HTTP; it drops a tag's points at steps >= each new one's). Each
training session has its own file, opening with file_version and a START; TensorBoard's run
discovery (EventMultiplexer) finds the run in a sweep's directory layout, and its HParams
dashboard shows a config's seeds as one group of finished sessions.
"""
import argparse
import fcntl
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")

FAILURES = []

METRICS_TAGS = ["train/loss", "train/lr", "train/grad_norm", "train/steps_per_s"]
EVAL_TAGS = ["eval/return_mean", "eval/return_std", "eval/normalized_return_mean",
             "eval/normalized_return_std"]
# checkpoints every 40 steps, evaluations every 15: a kill after step 46 drops rows of both.
CONFIG = """dataset: d.hdf5
env: hopper
backbone: mingru
n_layers: 1
embed_dim: 16
context_len: 5
batch_size: 4
max_steps: 125
warmup_steps: 1
eval_every: 15
eval_episodes: 1
checkpoint_every: 40
log_every: 1
target_return: 3600
"""
KILL_AFTER_STEP = 46


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        FAILURES.append(what)


def minrnn(binary, *args):
    result = subprocess.run([binary, *args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"minrnn {' '.join(args)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result.stdout + result.stderr


def complete_rows(path, header):
    """The rows of a CSV file the training appends to; a torn last line is not one."""
    with open(path) as f:
        return f.read().split("\n")[1 if header else 0:-1]


def csv_steps(path, header):
    return [int(line.split(",")[0]) for line in complete_rows(path, header)]


def csv_curves(run):
    """tag -> [(step, float32 value)] from the run's CSV files, named as TensorBoard's tags."""
    curves = {}
    for name, header, tags in (("metrics.csv", True, METRICS_TAGS), ("evals.csv", True, EVAL_TAGS)):
        for line in complete_rows(os.path.join(run, name), header):
            fields = line.split(",")
            for tag, text in zip(tags, fields[1:]):
                curves.setdefault(tag, []).append((int(fields[0]), np.float32(float(text))))
    return curves


def kill_after_a_checkpoint(binary, run):
    """Starts the training and kill -9s it once metrics.csv has a row past KILL_AFTER_STEP. Its
    output goes to a pipe of one page nobody reads, which stops it (about 60 progress lines in)
    long before its next checkpoint at step 80, however slowly this script looks."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen([binary, "train", "c.yaml", "--run-dir", run],
                            stdout=write_end, stderr=write_end)
    os.close(write_end)
    metrics = os.path.join(run, "metrics.csv")
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if os.path.exists(metrics) and max(csv_steps(metrics, True) or [0]) >= KILL_AFTER_STEP:
            break
        time.sleep(0.005)
    ended = proc.poll()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    os.close(read_end)
    if ended is not None or not os.path.exists(metrics):
        sys.exit(f"the training ended ({ended}) or stalled before step {KILL_AFTER_STEP}")
    return max(csv_steps(metrics, True)), csv_steps(os.path.join(run, "evals.csv"), True)


def resumed_from(output):
    match = re.search(r"resuming \S+ from step (\d+)", output)
    return int(match.group(1)) if match else None


def compare_with_tensorboard(run, label):
    from tensorboard.backend.event_processing import event_accumulator as ea

    acc = ea.EventAccumulator(run, size_guidance={ea.SCALARS: 0})  # 0: keep every point
    acc.Reload()
    expected = csv_curves(run)
    check(sorted(acc.Tags()["scalars"]) == sorted(METRICS_TAGS + EVAL_TAGS),
          f"{label}: TensorBoard shows the 8 scalar tags ({sorted(acc.Tags()['scalars'])})")
    for tag in METRICS_TAGS + EVAL_TAGS:
        if tag not in acc.Tags()["scalars"]:
            continue
        points = [(e.step, np.float32(e.value)) for e in acc.Scalars(tag)]
        want = expected.get(tag, [])
        same_steps = [s for s, _ in points] == [s for s, _ in want]
        check(same_steps, f"{label}: {tag} at the steps of the CSV rows, each once "
                          f"({len(points)} points, {len(want)} rows)")
        if same_steps:
            worst = max(abs(float(a) - float(b)) / max(abs(float(b)), 1e-30)
                        for (_, a), (_, b) in zip(points, want))
            check(worst <= 1e-6, f"{label}: {tag} values equal the CSV's (float32; worst "
                                 f"relative difference {worst:.1e})")


def fast_loader_curves(logdir, run_name, expected, seconds=90):
    """tag -> [(step, float32 value)] as `tensorboard --logdir LOGDIR` shows them by default: its
    fast loader (the Rust data server, which ignores SessionLog START), asked over HTTP. Polled
    until they equal `expected` (the server loads in the background) or `seconds` pass."""
    import json
    import urllib.parse
    import urllib.request

    server = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", logdir,
                               "--load_fast=true", "--port", "0", "--host", "127.0.0.1"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    curves = {}
    try:
        url = None
        for line in server.stdout:
            match = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
            if match:
                url = match.group(1)
                break
        if url is None:
            return None
        deadline = time.time() + seconds
        while time.time() < deadline and curves != expected:
            time.sleep(0.5)
            for tag in METRICS_TAGS + EVAL_TAGS:
                query = urllib.parse.urlencode({"run": run_name, "tag": tag})
                try:
                    with urllib.request.urlopen(f"{url}/data/plugin/scalars/scalars?{query}") as r:
                        points = json.load(r)
                except OSError:  # not loaded yet: 400 for an unknown run or tag
                    points = []
                curves[tag] = [(int(step), np.float32(value)) for _, step, value in points]
    finally:
        server.terminate()
        server.wait()
    return curves


def compare_with_fast_loader(logdir, run_name, run, label):
    expected = csv_curves(run)
    curves = fast_loader_curves(logdir, run_name, expected)
    if curves is None:
        check(False, f"{label}: tensorboard --load_fast=true started (the data server)")
        return
    for tag in METRICS_TAGS + EVAL_TAGS:
        got, want = curves.get(tag, []), expected.get(tag, [])
        check([p for p, _ in got] == [p for p, _ in want]
              and all(abs(float(a) - float(b)) <= 1e-6 * abs(float(b)) for (_, a), (_, b) in zip(got, want)),
              f"{label}: the default fast loader shows {tag} as the CSV rows "
              f"({len(got)} points, {len(want)} rows)")


def hparams_session_groups(logdir, seconds=90):
    """TensorBoard's HParams dashboard, asked over HTTP as its page asks (the default loader):
    (the hyper-parameters it lists, its session groups), once it lists any or `seconds` pass."""
    import json
    import urllib.request

    server = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", logdir,
                               "--port", "0", "--host", "127.0.0.1"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def post(url, path, body):
        request = urllib.request.Request(url + path, data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request) as r:
            return json.load(r)

    try:
        url = next((m.group(1) for m in (re.search(r"(http://127\.0\.0\.1:\d+)/", line)
                                          for line in server.stdout) if m), None)
        if url is None:
            return None, None
        names, groups = [], []
        deadline = time.time() + seconds
        while time.time() < deadline and not groups:
            time.sleep(0.5)
            try:
                experiment = post(url, "/data/plugin/hparams/experiment", {"experimentName": ""})
                names = [info["name"] for info in experiment.get("hparamInfos", [])]
                groups = post(url, "/data/plugin/hparams/session_groups", {
                    "experimentName": "", "colParams": [], "startIndex": 0, "sliceSize": 100,
                    "allowedStatuses": ["STATUS_UNKNOWN", "STATUS_SUCCESS", "STATUS_FAILURE",
                                        "STATUS_RUNNING"]}).get("sessionGroups", [])
            except OSError:  # not loaded yet
                pass
    finally:
        server.terminate()
        server.wait()
    return names, groups


def check_hparams(logdir):
    """The sweep's two seeds of one config are one row of the HParams dashboard: the config's
    learning keys listed (not the device), both runs its sessions, each finished."""
    names, groups = hparams_session_groups(logdir)
    if names is None:
        check(False, "tensorboard started for the HParams dashboard")
        return
    check({"backbone", "dataset", "lr", "embed_dim", "seed"} <= set(names) and "device" not in names,
          f"the HParams dashboard lists the config's learning keys ({sorted(names)})")
    check(len(groups) == 1, f"the two seeds of one config are one group ({len(groups)} groups)")
    if groups:
        sessions = sorted((s["name"], s["status"]) for s in groups[0]["sessions"])
        want = [(os.path.join("d", "mingru", f"seed{k}"), "STATUS_SUCCESS") for k in (0, 1)]
        check(sessions == want, f"the group's sessions are both finished runs ({sessions})")
        check(groups[0]["hparams"].get("backbone") == "mingru",
              f"the group's backbone is mingru ({groups[0]['hparams'].get('backbone')})")


def check_files(run, starts):
    """One file per training session: file_version, then START at the earlier of the CSV files'
    last rows when it began (rl/run_events.h)."""
    from tensorboard.backend.event_processing import event_file_loader

    files = sorted(f for f in os.listdir(run) if f.startswith("events.out.tfevents."))
    check(len(files) == len(starts), f"{len(starts)} training sessions wrote {len(files)} files")
    for name, start in zip(files, starts):
        events = list(event_file_loader.EventFileLoader(os.path.join(run, name)).Load())
        ok = (len(events) >= 2 and events[0].file_version == "brain.Event:2"
              and events[1].HasField("session_log") and events[1].session_log.status == 1
              and events[1].step == start)
        check(ok, f"{name}: file_version, then SessionLog START at step {start}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minrnn", required=True, help="the minrnn binary")
    args = parser.parse_args()
    binary = os.path.abspath(args.minrnn)
    import tensorboard
    from tensorboard.backend.event_processing import event_multiplexer

    print(f"tensorboard {tensorboard.__version__}")
    with tempfile.TemporaryDirectory(prefix="minrnn_tensorboard_") as root:
        os.chdir(root)
        minrnn(binary, "data", "synth", "d.hdf5", "--env", "hopper", "--steps", "400",
               "--episode-len", "50")
        with open("c.yaml", "w") as f:
            f.write(CONFIG)
        run = os.path.join("sweep", "d", "mingru", "seed0")
        last_step, evals = kill_after_a_checkpoint(binary, run)
        start = resumed_from(minrnn(binary, "train", "c.yaml", "--run-dir", run))
        print(f"killed at step {last_step} (evaluated at {evals}); resumed from step {start}")
        check(start is not None and start < last_step and any(s > start for s in evals),
              "the kill left metrics.csv and evals.csv rows past the checkpoint, which the resume "
              "dropped and redid")
        compare_with_tensorboard(run, "after kill -9 and resume")
        compare_with_fast_loader("sweep", os.path.join("d", "mingru", "seed0"), run,
                                 "after kill -9 and resume")

        minrnn(binary, "train", "c.yaml", "--run-dir", run, "--extend", "--set", "max_steps=150")
        check(125 not in csv_steps(os.path.join(run, "evals.csv"), True),
              "--extend dropped the evaluation at the old final step 125, off the cadence")
        compare_with_tensorboard(run, "after --extend")
        compare_with_fast_loader("sweep", os.path.join("d", "mingru", "seed0"), run,
                                 "after --extend")
        last_eval_kept = max([s for s in evals if s <= start], default=start)
        check_files(run, [0, min(start, last_eval_kept), 120])

        # A second seed of the config, trained straight to 150 steps: with the run extended to
        # 150, one row of TensorBoard's HParams dashboard.
        minrnn(binary, "train", "c.yaml", "--seed", "1", "--set", "max_steps=150", "--run-dir",
               os.path.join("sweep", "d", "mingru", "seed1"))
        check_hparams("sweep")

        multiplexer = event_multiplexer.EventMultiplexer().AddRunsFromDirectory("sweep")
        multiplexer.Reload()
        runs = sorted(multiplexer.Runs())
        check(runs == [os.path.join("d", "mingru", f"seed{k}") for k in (0, 1)],
              f"tensorboard --logdir finds the run of a sweep's layout ({runs})")
    if FAILURES:
        sys.exit(f"{len(FAILURES)} check(s) failed:\n  " + "\n  ".join(FAILURES))
    print("all checks passed")


if __name__ == "__main__":
    main()
