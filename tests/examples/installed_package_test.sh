#!/usr/bin/env bash
# A user's own program against an installed minrnn (README, "Use a trained policy from C++"):
# `cmake --install` this build into a fresh prefix, build examples/ as a project of its own there
# (find_package(minrnn), nothing of this tree on its include path), and run the program it makes
# on a trained run: it must return, step for step, what `minrnn eval` reports for that episode.
# Also the installed `minrnn` command trains and evaluates from outside the build folder.
# Usage: installed_package_test.sh SOURCE_DIR BUILD_DIR; exit 0 when all of that holds.
set -uo pipefail
source_dir=$1
build_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "installed package: $*" >&2
  exit 1
}

prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" > "$work/install.log" 2>&1 ||
  { tail -20 "$work/install.log" >&2; fail "cmake --install failed"; }
for installed in include/minrnn/infer/policy.h lib/libminrnn_infer.a lib/cmake/minrnn/minrnnConfig.cmake \
  bin/minrnn share/minrnn/configs/defaults.yaml; do
  [ -e "$prefix/$installed" ] || fail "$installed was not installed"
done

# The package names none of this machine's library files: a user's machine has its own LibTorch
# (found by the config's find_package(Torch)), its own libgomp, OSMesa, CUDA libraries.
if paths=$(grep -o -E '/[^";$<>]*\.so(\.[0-9]+)*' "$prefix"/lib/cmake/minrnn/minrnnTargets*.cmake); then
  fail "the exported targets name this machine's files: $(echo $paths | tr '\n' ' ')"
fi

# A control loop's own sources need no LibTorch header: the policy's and the environments' headers
# compile with the prefix alone on the include path (the libraries still link LibTorch).
printf '#include "infer/policy.h"\n#include "envs/registry.h"\nint main() { return 0; }\n' |
  c++ -std=c++17 -fsyntax-only -I "$prefix/include/minrnn" -x c++ - 2> "$work/headers.log" ||
  { cat "$work/headers.log" >&2; fail "infer/policy.h or envs/registry.h needs a header beyond the prefix"; }

# The example's own build: a C++ project that knows only the prefix. Its compiler sees the
# installed headers alone, so a header of ours including one that is not installed fails here.
if ! cmake -S "$source_dir/examples" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/configure.log" 2>&1; then
  grep -v "^--" "$work/configure.log" | tail -30 >&2
  fail "find_package(minrnn) against the installed package failed"
fi
cmake --build "$work/consumer" --verbose > "$work/build.log" 2>&1 ||
  { tail -30 "$work/build.log" >&2; fail "building the example against the installed package failed"; }
grep -E -q -- "(-I|-isystem )$source_dir(/| |$)" "$work/build.log" &&
  fail "the example was compiled with the source tree on its include path"
# It includes infer/policy.h and envs/registry.h alone: no LibTorch include path or flag.
compile=$(grep -- "-c [^ ]*policy_loop.cpp" "$work/build.log") || fail "no compile line of policy_loop.cpp"
case "$compile" in
  *torch/include* | *-fopenmp*) fail "policy_loop.cpp was compiled with LibTorch's headers or flags: $compile" ;;
esac

# A tiny run, trained and evaluated by the installed command, from a folder of its own.
minrnn=$prefix/bin/minrnn
version=$("$minrnn" --version) || fail "installed minrnn: --version failed"
grep -q "set(PACKAGE_VERSION \"${version#minrnn }\")" "$prefix/lib/cmake/minrnn/minrnnConfigVersion.cmake" ||
  fail "the package's version is not the command's ($version)"
mkdir -p "$work/run" && cd "$work/run" || fail "no work folder"
"$minrnn" data synth d.hdf5 --env hopper --steps 400 --episode-len 50 > synth.log 2>&1 ||
  { cat synth.log >&2; fail "installed minrnn: data synth failed"; }
# The installed configs, their defaults: chain included, on the data just written.
"$minrnn" train "$prefix/share/minrnn/configs/tiny-hopper-mingru.yaml" --seed 0 --run-dir run \
  --set dataset=d.hdf5 --set max_steps=6 --quiet > train.log 2>&1 ||
  { cat train.log >&2; fail "installed minrnn: train failed"; }
"$minrnn" eval run --episodes 1 --seed 3 --out eval.json > eval.log 2>&1 ||
  { cat eval.log >&2; fail "installed minrnn: eval failed"; }

"$work/consumer/policy_loop" run --episodes 1 --seed 3 > loop.log 2>&1 ||
  { cat loop.log >&2; fail "the example built against the package failed to run"; }
python3 - eval.json loop.log << 'EOF' || fail "the example's episode differs from minrnn eval's"
import json, re, sys
evaluation = json.load(open(sys.argv[1]))
loop = open(sys.argv[2]).read()
found = re.search(r"episode 0: return (\S+) over (\d+) steps", loop)
if not found:
    sys.exit(f"no 'episode 0: return R over N steps' in the example's output:\n{loop}")
ret, steps = float(found.group(1)), int(found.group(2))
want_ret, want_steps = evaluation["returns"][0], evaluation["lengths"][0]
print(f"example: return {ret} over {steps} steps; minrnn eval: {want_ret} over {want_steps}")
if steps != want_steps or abs(ret - want_ret) > 1e-5 * max(1.0, abs(want_ret)):
    sys.exit("they differ")
EOF
echo "installed package: the example built against $prefix returns what minrnn eval reports"
