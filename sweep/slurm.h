// `minrnn sweep SWEEP.yaml --backend slurm`: the same plan as a local sweep, run as one Slurm job
// array (docs/sweeps.md, "Running on Slurm").
//
//   slurm:                      # in the sweep file; every key optional
//     partition: gpu            # --partition
//     time: "4:00:00"           # --time (minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]])
//     cpus_per_task: 4          # --cpus-per-task (also the task's OMP_NUM_THREADS)
//     mem: 16G                  # --mem
//     gpus: 1                   # --gres=gpu:1 (or gres: gpu:a100:1)
//     account: myproject        # --account
//     qos: normal               # --qos
//     array_throttle: 20        # --array=...%20: tasks running at once
//     signal_before: 120        # SIGUSR1 this many seconds before the time limit:
//                               #   checkpoint, requeue
//     setup: ["module load cuda"]           # shell lines each task runs first
//     sbatch_args: ["--constraint=a100"]    # further sbatch options
//
// Submitting writes <out>/slurm/sweep.sbatch (one array task per pack of unfinished runs, a pack
// being one run or the seeds `pack` puts in one process (sweep.h, group_packs), the array index
// its first run's place in the plan: train, then eval each, into the runs' train.log) and submits
// it with `sbatch --parsable`; <out>/slurm/job.json records the job. The job carries the sweep's
// tag as its --comment ("minrnn:<absolute out>"), by which squeue's lines are told apart from
// another job's of the same id, and a queued job is found where job.json is lost. A task's batch
// script passes SIGTERM and SIGINT on to minrnn, which checkpoints and exits 75; on the time-limit
// warning (SIGUSR1) it requeues itself with `scontrol requeue`. The job has --requeue, so
// preemption and node failures requeue it too, and the requeued task resumes from the checkpoint.
#pragma once
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sweep/spawn.h"
#include "sweep/sweep.h"

namespace minrnn::sweep {

// Parses the `slurm:` mapping strictly: an unknown key or a bad value throws std::invalid_argument
// naming the file and the key (slurm.<key>).
SlurmSpec parse_slurm_spec(const YAML::Node& node, const std::string& file);

// The batch script that runs `packs` (group_packs: indices into `runs`) as array tasks, each its
// first run's index, with `exe` as minrnn. A pack's task trains its runs in one `minrnn train`,
// then evaluates each; a run that fails gets its failed.json and the others go on.
std::string slurm_batch_script(const SweepSpec& spec, const std::vector<SweepRun>& runs,
                               const std::vector<std::vector<int>>& packs, const std::string& exe);
// "0,2-5,7" (+ "%N" with a throttle): the --array value for these indices (sorted).
std::string slurm_array_spec(const std::vector<int>& tasks, int throttle);

// Plans the sweep and submits its unfinished runs as one job array; returns 0, or throws: when
// `sbatch` is not on PATH, when this sweep directory's previous array is still pending or running
// (naming its job id; found by job.json, or by the sweep's tag where job.json is missing), when
// job.json is unreadable, and when sbatch refuses (quoting its message; <out>/slurm/
// submit_error.txt then says so, no job.json is written, and running the same command again
// submits anew). Where sbatch exits 0 without a job id it can read, it says the job may have been
// submitted and how to check.
int submit_slurm_sweep(const SweepSpec& spec, const SweepOptions& options);

// The job id <out>/slurm/job.json records if squeue still lists tasks of it carrying the sweep's
// tag ("" otherwise), and in *listed how many. Where job.json is missing and `require_squeue`
// (a submission), a queued job carrying the tag instead. Throws std::runtime_error quoting squeue
// when it cannot tell, and for an unreadable job.json (naming the tagged job still queued, if
// any). Without squeue on PATH: "" when `require_squeue` is false (a local sweep on a machine
// without Slurm), with a note on stderr where job.json records a job.
std::string live_slurm_job(const std::string& out, bool require_squeue, int* listed = nullptr);
// A dry run's note where the Slurm job <out>/slurm/job.json records still has tasks queued (""
// where none, or no squeue here): the plan is as of this moment, and `refused` (what the same
// command without --dry-run would do) would be refused until they end.
std::string live_slurm_job_note(const SweepSpec& spec, const std::string& refused);

// What the queue says of the job <out>/slurm/job.json records: each array task's state by index
// ("RUNNING 0:42 on node3", "PENDING (Priority)", "COMPLETED (exit 0:0, 0:42)" from sacct for a
// task no longer queued, where the cluster keeps accounting).
struct SlurmJobView {
  std::string job_id;  // "" when nothing was submitted
  std::map<int, std::string> states;
  std::set<int> queued_tasks;      // those of `states` squeue lists, pending or running
  int queued = 0;                  // their number (as live_slurm_job counts)
  std::string queue_unknown;       // why squeue could not tell ("" when it answered)
  std::string other_job;           // set where the recorded id is another job's now (not the tag)
  std::vector<std::string> notes;  // what sacct could not say
};
SlurmJobView slurm_job_view(const std::string& out);

// How long sbatch, squeue, sacct and scancel may take before they are stopped and the answer is
// unknown: 60 s; tests shorten it.
void set_slurm_command_timeout(std::chrono::milliseconds timeout);

// The array task that trains each run of the job <out>/slurm/job.json records, by the run dir's
// absolute path (slurm_run_key), as submitted: the sweep file may have changed since, so a task's
// index in today's plan says nothing. Empty with *legacy set when job.json predates that record.
std::map<std::string, int> slurm_task_of_run(const std::string& out, bool* legacy);
std::string slurm_run_key(const std::string& run_dir);

}  // namespace minrnn::sweep
