// What the Slurm backend's parts share — sweep/slurm.cpp (submitting the job),
// slurm_job_file.cpp (job.json), slurm_queue.cpp (asking squeue and sacct about the job),
// slurm_script.cpp (the batch script) and slurm_sbatch_args.cpp: where a sweep's Slurm files go,
// the array's indices, the sweep's tag, and the time as they write it.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "io/text.h"
#include "sweep/spawn.h"
#include "sweep/sweep.h"

namespace minrnn::sweep {

// <out>/slurm, absolute: the batch script, the tasks' logs, job.json.
inline std::filesystem::path slurm_dir(const std::string& out) {
  return std::filesystem::absolute(out) / "slurm";
}

// Each pack's array index: its first run's place in the plan.
inline std::vector<int> first_runs(const std::vector<std::vector<int>>& packs) {
  std::vector<int> firsts;
  for (const auto& pack : packs) firsts.push_back(pack[0]);
  return firsts;
}

// The local time, as the script's header and job.json give it.
inline std::string now_text() {
  return io::local_time_text("%Y-%m-%d %H:%M:%S");
}

// The job <out>/slurm/job.json records: its id ("" when there is no job.json), the sweep's tag it
// was submitted with ("" in a job.json older than tags) and, by run key (slurm_run_key), the array
// task of each run ({} with `legacy` set in one older than that record). Throws std::runtime_error
// naming the file and what was expected where it is unreadable or its job_id is not a job id.
struct RecordedJob {
  std::string id, tag;
  std::map<std::string, int> task_of_run;
  bool legacy = false;
};
RecordedJob read_recorded_job(const std::string& out);
// Writes <out>/slurm/job.json for `job`; where it cannot, cancels the job and throws.
void record_job(const std::string& job, const SweepSpec& spec, const std::string& array,
                const std::vector<SweepRun>& runs, const std::vector<std::vector<int>>& packs);

// A Slurm command (sbatch, squeue, sacct, scancel) run with the backend's timeout
// (set_slurm_command_timeout), and what it said, for an error message.
CommandOutput run_slurm_command(const std::vector<std::string>& argv);
std::string command_message(const CommandOutput& r);

// Why `item` of slurm.sbatch_args cannot go into the batch script ("" when it can): not one
// option, or one minrnn sweep sets itself (also as an abbreviation or a short option).
std::string sbatch_arg_problem(const std::string& item);

// `path` as the value of a #SBATCH option, to go in double quotes; with `pattern`, its '%' doubled,
// so that sbatch takes them literally in a log file name. Throws std::invalid_argument naming
// `what` for a character no #SBATCH line can carry (a control character, '"', '\\').
std::string sbatch_path_value(const std::string& path, const std::string& what, bool pattern);

// The sweep's tag, which its job carries as its --comment: how squeue tells this sweep's job from
// another that has the recorded id, and finds it where job.json is lost.
inline std::string slurm_tag(const std::string& out) {
  return "minrnn:" + slurm_dir(out).parent_path().lexically_normal().string();
}

}  // namespace minrnn::sweep
