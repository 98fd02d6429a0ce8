// What the Slurm backend's two halves share — sweep/slurm.cpp (submitting the job, asking the
// queue about it) and sweep/slurm_script.cpp (the batch script it submits): where a sweep's Slurm
// files go, the array's indices, and the time as both write it.
#pragma once
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

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
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return buf;
}

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
