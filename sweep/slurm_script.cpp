// The batch script of a sweep's Slurm job array (slurm.h, slurm_batch_script): its #SBATCH
// options, the table of each array task's pack, and the steps every task takes.
#include <cctype>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/shell_word.h"
#include "io/text.h"
#include "sweep/slurm.h"
#include "sweep/slurm_files.h"

namespace minrnn::sweep {
namespace {

namespace fs = std::filesystem;

using io::shell_quote;
using io::shell_word;

using io::visible;

std::string abs_dir(const SweepRun& r) {
  return fs::absolute(r.run_dir).string();
}

// The #SBATCH lines: the array of `packs` (each its first run's index) and the sweep's resources.
void write_sbatch_options(std::ostream& s, const SweepSpec& spec,
                          const std::vector<std::vector<int>>& packs, const std::string& cwd) {
  const SlurmSpec& sl = spec.slurm;
  std::string job_name = "minrnn-" + fs::path(spec.file).stem().string();
  for (char& c : job_name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  auto opt = [&](const std::string& o) { s << "#SBATCH " << o << "\n"; };
  opt("--job-name=" + job_name);
  opt("--array=" + slurm_array_spec(first_runs(packs), sl.array_throttle));
  // <out>/slurm/logs/ (slurm_dir), checked as `out` alone, so that an error shows what was given.
  const std::string out = fs::absolute(spec.out).string();
  opt("--output=\"" + sbatch_path_value(out, "out", true) + "/slurm/logs/%A_%a.out\"");
  opt("--open-mode=append");
  opt("--chdir=\"" + sbatch_path_value(cwd, "the directory submitted from", false) + "\"");
  opt("--comment=\"" + sbatch_path_value(slurm_tag(spec.out), "out", false) + "\"");
  opt("--requeue");
  opt("--signal=B:USR1@" + std::to_string(sl.signal_before));
  if (!sl.partition.empty()) opt("--partition=" + sl.partition);
  if (!sl.time.empty()) opt("--time=" + sl.time);
  if (sl.cpus_per_task > 0) opt("--cpus-per-task=" + std::to_string(sl.cpus_per_task));
  if (!sl.mem.empty()) opt("--mem=" + sl.mem);
  if (sl.gpus > 0) opt("--gres=gpu:" + std::to_string(sl.gpus));
  if (!sl.gres.empty()) opt("--gres=" + sl.gres);
  if (!sl.account.empty()) opt("--account=" + sl.account);
  if (!sl.qos.empty()) opt("--qos=" + sl.qos);
  for (const auto& a : sl.sbatch_args) opt(a);
}

// The `case` that gives each array task its pack: RUN_DIRS, the TRAIN command, and STEPS, each
// run's max_steps (trained through: its done.json at that step, as a local sweep counts it; an
// extended run's done.json is its shorter budget's until training moves it aside).
void write_task_table(std::ostream& s, const std::vector<SweepRun>& runs,
                      const std::vector<std::vector<int>>& packs) {
  s << "case \"${SLURM_ARRAY_TASK_ID:-}\" in\n";
  for (const auto& pack : packs) {
    s << "  " << pack[0] << ") RUN_DIRS=(";
    for (int i : pack) s << (i == pack[0] ? "" : " ") << shell_quote(abs_dir(runs[size_t(i)]));
    s << ")\n     TRAIN=(";
    const auto absolute = [](const std::string& p) { return fs::absolute(p).string(); };
    const std::vector<std::string> train = pack_train_args(runs, pack, absolute);
    for (size_t k = 0; k < train.size(); ++k) s << (k ? " " : "") << shell_word(train[k]);
    s << ")\n     STEPS=(";
    for (int i : pack) s << (i == pack[0] ? "" : " ") << runs[size_t(i)].max_steps;
    s << ") ;;\n";
  }
  s << "  *) echo \"minrnn sweep: array task ${SLURM_ARRAY_TASK_ID:-?} is not a run of this "
       "sweep\" >&2; exit 2 ;;\nesac\n";
}

// What every task does with its pack: train the runs (unless all are done), evaluate each, pass
// signals on to minrnn and requeue before the time limit, and record each run's failure.
constexpr const char* kTaskSteps = R"SH(LOG="${RUN_DIRS[0]}/train.log"
TASK="${SLURM_ARRAY_JOB_ID:-?}_${SLURM_ARRAY_TASK_ID}"
for dir in "${RUN_DIRS[@]}"; do mkdir -p "$dir" && rm -f "$dir/failed.json"; done
for dir in "${RUN_DIRS[@]:1}"; do echo "\$ trained in one Slurm task with ${RUN_DIRS[0]}: see $LOG" >>"$dir/train.log"; done
# SIGTERM/SIGINT (scancel, scontrol requeue, preemption): passed on to minrnn, which finishes its
# step, checkpoints and exits 75; Slurm then requeues the task or not. SIGUSR1 (--signal, before
# the time limit): the same, and then this task requeues itself.
child='' woke=0 signalled=0 timeout=0 failures=0
trap 'woke=1 signalled=1; [ -n "$child" ] && kill -TERM "$child" 2>/dev/null' TERM INT
trap 'woke=1 signalled=1 timeout=1; [ -n "$child" ] && kill -TERM "$child" 2>/dev/null' USR1
phase() {  # LOG ARGS...: runs minrnn ARGS in the background, so that the traps can pass signals on
  local log=$1
  shift
  echo "\$ minrnn $*  # Slurm task $TASK on $(hostname), restart ${SLURM_RESTART_COUNT:-0}" >>"$log"
  # MINRNN_PARENT_PID: minrnn gets SIGTERM (and checkpoints) should this script die, even by SIGKILL
  MINRNN_PARENT_PID=$$ "$MINRNN" "$@" >>"$log" 2>&1 &
  child=$!
  while :; do woke=0; wait "$child"; status=$?; [ "$woke" = 1 ] || break; done
  child=
  return "$status"
}
stopped() {  # PHASE STATUS: stopped by a signal (after checkpointing, for training)
  echo "minrnn sweep: $1 of ${RUN_DIRS[*]} stopped by a signal (exit $2); a requeued task, or the next submission, resumes it" >&2
  if [ "$timeout" = 1 ]; then
    scontrol requeue "${SLURM_JOB_ID}" || echo "minrnn sweep: scontrol requeue failed; run minrnn sweep again to resubmit" >&2
  fi
  exit 75
}
failed() {  # DIR PHASE STATUS: the run in DIR failed; the pack's others go on
  printf '{"phase": "%s", "exit_code": %d, "slurm_task": "%s"}\n' "$2" "$3" "$TASK" >"$1/failed.json.tmp" &&
    mv -f "$1/failed.json.tmp" "$1/failed.json"
  echo "minrnn sweep: $2 of $1 failed (exit $3); see $1/train.log" >&2
  failures=$((failures + 1))
}
json_int() {  # FILE KEY: KEY's whole-number value in FILE, a JSON file minrnn wrote
  grep -o "\"$2\": *[0-9][0-9]*" "$1" 2>/dev/null | head -n 1 | grep -o '[0-9]*$'
}
trained() {  # INDEX: the pack's run INDEX is trained through (done.json at its STEPS)
  [ "$(json_int "${RUN_DIRS[$1]}/done.json" step)" = "${STEPS[$1]}" ]
}
evaluated() {  # INDEX: run INDEX holds the sweep's result (a requeue after its evaluation ended)
  local result="${RUN_DIRS[$1]}/eval.json"
  [ "$(json_int "$result" train_step)" = "${STEPS[$1]}" ] &&
    [ "$(json_int "$result" episodes)" = "$EPISODES" ] &&
    grep -q '"mean_normalized": *-\{0,1\}[0-9]' "$result"
}
to_train=0
for i in "${!RUN_DIRS[@]}"; do trained "$i" || to_train=1; done
if [ "$to_train" = 1 ]; then
  phase "$LOG" "${TRAIN[@]}"; st=$?
  if [ "$st" != 0 ]; then
    { [ "$st" = 75 ] || [ "$signalled" = 1 ]; } && stopped train "$st"
    if [ "$st" = 73 ]; then  # io::kExitDirBusy: another process (a user's own train) holds a run
      echo "minrnn sweep: another process holds a run dir of ${RUN_DIRS[*]}; left to it, not failed (see $LOG)" >&2
      exit 73
    fi
    # The pack's exit status speaks for all its runs: those trained through go on to evaluation.
    for i in "${!RUN_DIRS[@]}"; do trained "$i" || failed "${RUN_DIRS[$i]}" train "$st"; done
  fi
fi
[ "$signalled" = 0 ] || stopped train 75
for i in "${!RUN_DIRS[@]}"; do
  dir=${RUN_DIRS[$i]}
  [ -e "$dir/failed.json" ] && continue
  evaluated "$i" && continue
  phase "$dir/train.log" eval "$dir" "${EVAL[@]}"; st=$?
  if [ "$st" != 0 ]; then [ "$signalled" = 1 ] && stopped eval "$st"; failed "$dir" eval "$st"; fi
done
[ "$failures" = 0 ] || exit 1
echo "minrnn sweep: ${RUN_DIRS[*]} done"
)SH";

}  // namespace

std::string sbatch_path_value(const std::string& path, const std::string& what, bool pattern) {
  std::string value;
  for (char c : path) {
    // sbatch reads '"' and '\\' as quoting and escapes on a #SBATCH line, and a '\\' in a log
    // file name turns its %-patterns off; a line cannot hold a newline at all.
    if (std::iscntrl(static_cast<unsigned char>(c)) || c == '"' || c == '\\') {
      throw std::invalid_argument(
          "--backend slurm: " + what + " '" + visible(path) +
          "' cannot go into the batch script's #SBATCH lines: expected a path without control "
          "characters (newlines, tabs), '\"' or '\\\\'");
    }
    value += pattern && c == '%' ? std::string("%%") : std::string(1, c);
  }
  return value;
}

std::string slurm_array_spec(const std::vector<int>& tasks, int throttle) {
  std::string spec;
  for (size_t i = 0; i < tasks.size();) {
    size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    if (!spec.empty()) spec += ",";
    spec += std::to_string(tasks[i]);
    if (j > i) spec += "-" + std::to_string(tasks[j]);
    i = j + 1;
  }
  if (throttle > 0) spec += "%" + std::to_string(throttle);
  return spec;
}

std::string slurm_batch_script(const SweepSpec& spec, const std::vector<SweepRun>& runs,
                               const std::vector<std::vector<int>>& packs, const std::string& exe) {
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Written by `minrnn sweep " << visible(spec.file) << " --backend slurm` on " << now_text()
    << ".\n# One array task per pack of runs (one run, or seeds that train in one process; the "
       "index is its\n# first run's place in the sweep's plan): `minrnn train`, then `minrnn eval` "
       "of each run, into\n# the runs' train.log. See docs/sweeps.md, \"Running on Slurm\".\n";
  const std::string cwd = fs::current_path().string();
  write_sbatch_options(s, spec, packs, cwd);
  // Entered again by the script itself, quoted as bash reads it: whatever a Slurm makes of a '%'
  // in --chdir (22.05 keeps it; --output expands it) or of a folder it cannot enter (slurmd then
  // starts the job in /tmp), a config's relative dataset path is read from where it was given.
  s << "set -u\ncd -- " << shell_quote(cwd) << " || exit 2\nMINRNN=" << shell_quote(exe) << "\n";
  write_task_table(s, runs, packs);
  s << "EPISODES=" << spec.eval_episodes << "\nEVAL=(--episodes \"$EPISODES\" --device "
    << kEvaluationDevice << " --replace)\n";
  const std::string threads =
      spec.threads > 0 ? std::to_string(spec.threads) : "${SLURM_CPUS_PER_TASK:-1}";
  s << "export OMP_NUM_THREADS=" << threads << " MKL_NUM_THREADS=" << threads << "\n";
  for (const auto& line : spec.slurm.setup) s << line << "\n";
  s << kTaskSteps;
  return s.str();
}

}  // namespace minrnn::sweep
