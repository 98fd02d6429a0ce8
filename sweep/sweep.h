// Seed sweeps: every seed × dataset × backbone of a sweep file, trained and evaluated by child
// processes of this same binary (`minrnn train` then `minrnn eval`), several at a time.
//
//   # a sweep file (configs/sweeps/ holds real ones)
//   datasets: [hopper-medium, walker2d-medium]
//   backbones: [mingru, minlstm]
//   seeds: [0, 1, 2]
//   config: ../{dataset}-{backbone}.yaml  # optional; relative to this file; this is the default
//   set: [max_steps=1000]                 # optional `--set` overrides for every run
//   out: runs/sweeps/example              # optional; default runs/sweeps/<file stem>
//   parallel: 2                           # optional; processes at a time (default 1)
//   pack: 3                               # optional; seeds trained in one process (default auto)
//   eval_episodes: 10                     # optional; episodes of the final `minrnn eval`
//   slurm: {partition: gpu, time: "4:00:00"}  # optional; for `--backend slurm` (sweep/slurm.h)
//
// A run lives in <out>/<dataset>/<backbone>/seed<S>/ (the trainer's run dir plus train.log): a
// dataset label is a plain folder name, and no entry of datasets, backbones or seeds is given
// twice. Re-running a sweep skips runs holding done.json and eval.json, evaluates
// trained-but-unevaluated ones, and resumes interrupted ones from their checkpoint. A run directory
// whose config.yaml differs from what the sweep now asks (another max_steps in `set`, an edited
// config) is never skipped or resumed as if it were the sweep's: planning fails naming the run and
// the keys. The one change a sweep may carry on with is a larger max_steps, with `--extend`: those
// runs train on from their checkpoints and are evaluated again (their earlier results kept as
// *-step<N>). Both phases run on the config's `device` (`minrnn eval --device`). A run that failed
// holds failed.json ({"phase", "exit_code", ...}) until it is started again.
#pragma once
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace minrnn::sweep {

// The `slurm:` section: what `minrnn sweep --backend slurm` asks the cluster for. Empty strings
// and zeros leave the choice to the cluster's defaults. See sweep/slurm.h.
struct SlurmSpec {
  std::string partition, time, mem, gres, account, qos;  // sbatch --partition --time --mem ...
  int cpus_per_task = 0;
  int gpus = 0;                    // --gres=gpu:N (use `gres` for a typed one, e.g. gpu:a100:1)
  int array_throttle = 0;          // the array's %N: tasks running at once (0: as many as fit)
  int signal_before = 120;         // SIGUSR1 to the task this many seconds before its time limit
  std::vector<std::string> setup;  // shell lines each task runs first (module load ...)
  std::vector<std::string> sbatch_args;  // further sbatch options, e.g. --constraint=a100
};

struct SweepSpec {
  std::string file;  // where it came from (for error messages and relative paths)
  std::vector<std::string> datasets, backbones;
  std::vector<int64_t> seeds;
  std::string config_template = "../{dataset}-{backbone}.yaml";
  std::vector<std::string> sets;  // "key=value"; {dataset} / {backbone} are substituted
  std::string out;
  int parallel = 1;
  // Runs trained together by one `minrnn train` process (rl::train_pack), each exactly as alone:
  // the seeds of one dataset × backbone, then other configs' runs that can share the process
  // (group_packs). On a GPU they share it, each on a stream of its own, side by side, where
  // separate processes would take turns. 0 (`pack: auto`, the default): up to kAutoGpuPack on
  // CUDA (kAutoStackedPack where the pack is one stacked model), 1 on the CPU (where a process per
  // run is no slower). On Slurm a pack is one array task.
  int pack = 0;
  int threads = 0;  // torch threads per child; 0 = the cores / the children at once (sweep.cpp)
  int eval_episodes = 10;
  SlurmSpec slurm;
  // Not a file key (`minrnn sweep --extend`): runs trained to a smaller max_steps than the sweep
  // now asks, their config otherwise the same, train on from their checkpoints (`train --extend`).
  bool extend = false;
  // Not a file key: the command line's --set, or those the sweep was last started with where it
  // gives none (sweep/command_sets.h), in `sets` too.
  std::vector<std::string> command_sets;
  // Not a file key: the file's own `set`, before command_sets replaced any of its keys.
  std::vector<std::string> file_sets;
  // Not a file key: the command line's options that decide the runs and where they are (--set,
  // --out, --extend), shell-quoted, for the commands a hint prints (sweep_command).
  std::string command_options;
};

// "minrnn sweep FILE [the command line's --set/--out/--extend] FLAG": the command of this very
// sweep a hint names (`--status` to watch it), which a bare `minrnn sweep FILE --status` is not
// where the command line moved its `out` or changed its runs.
std::string sweep_command(const SweepSpec& spec, const std::string& flag);

// The most a sweep's counts (parallel, pack, threads, eval_episodes) may be, in its file or on
// the command line.
constexpr int kSweepCountMax = 4096;

constexpr int kAutoGpuPack = 16;
// Whether a run of a config's `device` (cpu, cuda[:N], auto) trains on CUDA here: `auto` does
// where a CUDA device is usable.
bool on_cuda(const std::string& device);
// A stacked pack's runs under `pack: auto` (one stack shape, split evenly): a stacked model's
// rate still climbs past 16 runs where a pack of streams' has stopped (H200, 2026-11-28 05:34,
// minGRU fp32 run-steps/s: stacked 2 446 at P 15, 2 681 at 32; streams 2 240 at 16, 2 274 at
// 32). It climbs past 32 too (2026-11-30: 3 099 at 32, 3 252 at 64), but a sweep's pack of 64
// minGRU runs at embed 128 held 16.5 GiB of that GPU (nvidia-smi), more than a 16 GB GPU has:
// `pack: 64` asks for it where a GPU has room; a pack that runs out of memory says so.
constexpr int kAutoStackedPack = 32;
// The runs one process trains at most for `spec` on `device` (a config's: cpu, cuda[:N], auto).
int pack_limit(const SweepSpec& spec, const std::string& device);
// The runs a pack that is one stacked model takes at most (group_packs): `pack` where the file
// gives one, else kAutoStackedPack.
int stacked_pack_limit(const SweepSpec& spec);
// pack_limit said for a reader: "16", or "16 (32 where a pack is one stacked model)" where `pack:
// auto` stacks on `device`.
std::string pack_limit_text(const SweepSpec& spec, const std::string& device);

// `text` (a config path, a set's "key=value") of one cell: {dataset} and {backbone} replaced.
std::string fill_cell(std::string text, const std::string& dataset, const std::string& backbone);
// Why a sweep's `set` or --set "key=value" is no override ("" where it is one): rl::
// why_not_override of it filled in for each of the sweep's cells, as each run's will be.
std::string why_not_sweep_set(const std::string& key_value, const SweepSpec& spec);

// Why `set` overrides a key the sweep sets per run itself ("" where it does not): backbone, seed,
// or one dataset for every label; an override of one would train every run of a row or column
// with one value under its own label (a minLSTM's score in the mingru column).
std::string why_a_sweeps_own_key(const SweepSpec& spec, const std::string& set);

// Parses a sweep file strictly: an unknown key or a value of the wrong type throws
// std::invalid_argument naming the key and the file.
SweepSpec parse_sweep(const std::string& yaml_text, const std::string& file);
SweepSpec load_sweep(const std::string& path);

enum class RunState { kPending, kTrained, kDone };  // kTrained: done.json but no eval.json

// A run's final evaluation (`minrnn eval`, its eval.json) rolls out on the CPU whatever the run
// trained on, as its evaluations during training do: the packed engine's batch-1 steps take
// microseconds there, while on a GPU they are launch-bound, and the GPU is the packs' still
// training (an H200, 2026-11-27: 30 Transformer episodes at 49 batched steps/s beside two packs).
inline constexpr const char* kEvaluationDevice = "cpu";

struct SweepRun {
  std::string dataset, backbone;
  int64_t seed = 0;
  std::string config;                  // resolved config file
  std::vector<std::string> overrides;  // passed as --set
  std::string run_dir;
  RunState state = RunState::kPending;
  int64_t max_steps = 0;       // the config's, with the overrides (for progress lines)
  int64_t eval_every = 0;      // the config's: the evaluations a progress line's ETA counts
  std::string device = "cpu";  // the config's: where training runs (evaluation: kEvaluationDevice)
  std::string matmul_precision = "fp32";  // the config's: one process computes in one
  bool extend = false;  // trained to a smaller max_steps: `train --extend` goes on from there
  // The config's `dataset` (an id or a path) and whether it is there (data::locate_dataset):
  // a run still to train cannot start without it.
  std::string dataset_source, dataset_where;
  bool data_missing = false;
  bool data_downloadable = false;  // an id `minrnn data download` fetches, not a path
  // Why the data is there but does not load (the reader's error, naming the file; "" when it loads
  // or was not read): the plan reads it only for runs that go on from an env.json, never for
  // --status.
  std::string data_unreadable;
  // Whether that error says the file's contents are bad (not a dataset's, or what HDF5 cannot
  // decode), where moving it away and fetching it again helps; not a system call's failure (EIO, a
  // lock refused, no memory), which says nothing of the file.
  bool data_damaged = false;
  // What its model and step share with every run it could train with as one stacked model
  // (rl::stack_shape, its env's widths from the config's env or dataset name); "" where the
  // widths are unknown until its data is read (then only its config's runs are known to stack).
  std::string stack_shape;
  bool stacks = true;  // its model has stacked ops (rl::stack_refusal): HGRN's and conv's do not
  // Why its directory holds no run of this sweep's ("" when it does): another config ("lr: 0.001
  // -> 0.0003"), an eval.json that is no result of the sweep's ("eval.json: eval_episodes: 10
  // -> 30"), or a run that cannot go on from its run dir: a checkpoint cut short, other data
  // than it trained on (rl::why_other_data); then what to do.
  // plan_sweep refuses such a sweep; --status (PlanMismatches::kReport) shows the run.
  std::string mismatch;
  bool mismatch_in_result = false;  // the mismatch is the eval.json's alone: move that away
  bool result_unreadable = false;   // of those, one that is no result at all (a null score)
  bool mismatch_extends = false;    // the mismatch is a smaller max_steps alone: --extend trains on
  bool cannot_go_on =
      false;  // the run is the sweep's: its checkpoint is cut short, or its data changed
};

enum class PlanMismatches { kRefuse, kReport };

// Whether a local sweep of `runs` evaluates its trained runs beside its trainings (`parallel` of
// each, sweep/local_pool.cpp): where every run still to train trains on CUDA, as evaluations need
// the CPU alone; on the CPU the cores are what both phases share (`parallel` children in all).
bool evaluates_beside_training(const std::vector<SweepRun>& runs);

// Expands the spec into runs (datasets × backbones × seeds, in that nesting order), checks that
// every config loads with its overrides (so a typo fails before hours of training), reads each
// run directory's state and whether each run's dataset is there (SweepRun::data_missing). Throws
// std::invalid_argument naming every run directory whose config.yaml differs from the sweep's
// config for it, and the keys that differ; every finished run whose eval.json is no result of the
// sweep's (unreadable, or rolled out over another number of episodes than its eval_episodes);
// every run to go on from its run dir whose checkpoint is cut short or whose dataset now holds
// other data than its env.json records (each such dataset read once); and an override (`set`,
// --set) of what the sweep sets per run itself: backbone, seed, and a dataset shared by several
// dataset labels. With PlanMismatches::kReport the runs whose directory holds another config or
// evaluation, or that cannot go on (a checkpoint cut short: SweepRun::cannot_go_on), are returned
// with SweepRun::mismatch set instead (no dataset is read: --status reads the run dirs alone).
std::vector<SweepRun> plan_sweep(const SweepSpec& spec,
                                 PlanMismatches mismatches = PlanMismatches::kRefuse);

// `indices` (into `runs`, in plan order) as packs, each trained by one `minrnn train` (a local
// process or a Slurm task): the first run left and, up to pack_limit, the later ones that can
// share its process — the same overrides, device, matmul precision and extension — those of its
// config first (the seeds of one dataset × backbone), then those of its stack shape (other
// datasets of its env with the same model: one stacked model where packs stack, rl/trainer.h),
// then, while there is room, the others: on one GPU the runs of one process run side by side,
// where two processes take turns.
// Where packs stack (MINRNN_STACKED_PACK=1 on CUDA) a pack takes runs of its first's stack shape
// alone, as many as split them evenly into packs of at most pack_limit.
std::vector<std::vector<int>> group_packs(const SweepSpec& spec, const std::vector<SweepRun>& runs,
                                          const std::vector<int>& indices);
// What runs one stacked model can train share: their stack shape, or their config where the
// shape is unknown.
std::string stack_key(const SweepRun& run);

// The `minrnn train` arguments that train `pack` in one process: its config (one per run where
// they differ), each run's --seed and --run-dir, --quiet, the shared --set overrides, --extend.
// `path` maps each file and directory named (identity, or absolute for a Slurm task).
std::vector<std::string> pack_train_args(
    const std::vector<SweepRun>& runs, const std::vector<int>& pack,
    const std::function<std::string(const std::string&)>& path);

// The datasets of runs still to train that are not there, each once, in plan order.
std::vector<std::string> missing_datasets(const std::vector<SweepRun>& runs);
// How --dry-run marks a run still to train whose data is missing: "data missing: minrnn data
// download hopper-medium-v2", or for a path "data missing: no file data/x.hdf5"; or unreadable:
// "data unreadable: <the reader's error>"; "" otherwise.
std::string data_missing_note(const SweepRun& run);
// Refuses (std::runtime_error) a sweep some of whose runs still to train have no data, naming
// every missing dataset and the command that downloads those that can be, and every one there
// that does not load (SweepRun::data_unreadable, with the reader's error): both backends call it
// before they start or submit anything, so a sweep never starts runs that each fail.
void refuse_missing_datasets(const SweepSpec& spec, const std::vector<SweepRun>& runs);
// Whether a dataset reader's error says the file's contents are bad (SweepRun::data_damaged).
bool says_contents_damaged(const std::exception& e);
// Throws where runs still to train ask for a device this machine cannot use (device=cuda without
// one): each would fail alone (a walk, 2026-11-30: 135 failed.json for one missing GPU). A local
// sweep's (run_sweep); a Slurm sweep's devices are the compute nodes'.
void refuse_unusable_device(const SweepSpec& spec, const std::vector<SweepRun>& runs);

// Prints a note for each dataset the runs train on that sits under a published D4RL file's name
// without being it (data::d4rl_lookalike_note): the runs train --quiet, and would not say so.
void note_lookalike_datasets(const std::vector<SweepRun>& runs);

// Makes `dir` (the sweep's `out`, or a folder in it) with the folders above it; throws
// std::runtime_error naming the sweep file, its `out` and why where it cannot be made or written.
void make_sweep_dir(const SweepSpec& spec, const std::string& dir);

// The last step a run directory's metrics.csv logged; 0 where it logged none.
int64_t logged_step(const std::string& run_dir);

// "hopper-medium/mingru/seed0": how progress lines and `--status` name a run.
std::string run_name(const SweepRun& r);

struct SweepOptions {
  std::string exe = "/proc/self/exe";  // the `minrnn` binary the children run
  bool dry_run = false;                // print the plan only
  // Refuse runs to train on a device this machine cannot use (refuse_unusable_device; a dry run
  // notes it): off only for a stand-in `exe` that trains on no device.
  bool check_devices = true;
  double progress_every_s = 60;  // how often a line says where the running runs are
};

// What a local sweep left undone, besides its return value (the failed runs).
struct SweepSummary {
  int failed = 0;          // a phase exited non-zero (each run holds failed.json)
  int busy = 0;            // another live process holds the run dir
  int interrupted = 0;     // left unfinished by a signal (checkpointed or not, or trained and not
                           // evaluated); the next sweep resumes them
  int unevaluated = 0;     // of them, those trained whose evaluation did not run
  int uncheckpointed = 0;  // of them, those stopped before their first checkpoint
  int not_started = 0;     // runs this sweep had still to start when it ended
  int stop_signal = 0;     // the stop signal that stopped the sweep itself (0: none did)
};

// What a stop left, by kind: "2 run(s) stopped after checkpointing, 1 stopped before a checkpoint,
// 1 trained and not yet evaluated, 3 not started".
struct LeftUnfinished {
  int checkpointed = 0, uncheckpointed = 0, unevaluated = 0, not_started = 0;
};
std::string left_unfinished(const LeftUnfinished& left);

// Runs every unfinished run; returns the number that failed. A run whose directory another live
// process holds (an earlier sweep's orphan, a second sweep) is reported "running in pid N", not
// counted as failed. The children get SIGTERM when the sweep process dies, however it dies. On
// SIGINT (Ctrl-C) or SIGTERM the sweep starts nothing more, passes SIGTERM on to its children,
// which finish their step and checkpoint, and returns once they have exited (summary->stop_signal
// says so). Writes <out>/sweep_status.json after every change and prints progress lines to
// stdout: one per finished run (runs done / total, ETA) and, every `progress_every_s`, the step,
// rate and ETA of each run still training. Refuses (std::runtime_error) while a Slurm array of
// the same sweep directory is pending or running.
int run_sweep(const SweepSpec& spec, const SweepOptions& options, SweepSummary* summary = nullptr);

// Where one run is, read from its directory (and, for a Slurm sweep, from squeue/sacct).
struct RunStatus {
  SweepRun run;
  // pending | training | stopped (not running, not finished) | trained (not evaluated) |
  // evaluating | done | failed | mismatched (another config or evaluation: SweepRun::mismatch) |
  // cannot_go_on (the sweep's run, SweepRun::cannot_go_on, that no live process holds)
  std::string state;
  int64_t step = 0;  // last step in metrics.csv
  // A checkpoint.pt is there: a stopped run resumes from it (at or before `step`), else from 0.
  bool checkpointed = false;
  double score = 0;           // done: eval.json's mean_normalized
  long pid = -1;              // a live process on this host that holds the run dir
  std::string failure;        // failed: e.g. "train exit 1"; the others': SweepRun::mismatch
  std::string log;            // <run_dir>/train.log
  std::string slurm;          // the array task's state, e.g. "RUNNING 0:42 on node3" ("" if none)
  bool slurm_queued = false;  // that task is pending or running: it resumes the run itself
};

// Every run's status, from the run directories alone plus, when <out>/slurm/job.json records a
// submission, what squeue (and sacct, where the cluster keeps accounting) say of its array.
// *notes gets lines about the job itself (its id, squeue's errors).
std::vector<RunStatus> sweep_status(const SweepSpec& spec, std::vector<std::string>* notes);
// Prints them as a table (or JSON); returns the number of runs that need the user: failed ones,
// mismatched ones and those that cannot go on (the sweep refuses to start until they are dealt
// with).
int print_sweep_status(const SweepSpec& spec, bool json);

}  // namespace minrnn::sweep
