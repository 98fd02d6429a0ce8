// <out>/slurm/job.json: the submitted job, the tag it carries and which array task trains which run
// (sweep/slurm_files.h). Run dirs are recorded absolute, so that --status from another working
// directory finds them; a job.json older than that holds them as given, relative to the directory
// submitted from, which its batch script's --chdir line names.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/python_json.h"
#include "sweep/slurm.h"
#include "sweep/slurm_files.h"

namespace minrnn::sweep {
namespace {

namespace fs = std::filesystem;

// The directory an older job.json's relative run dirs are relative to: its script's
// `#SBATCH --chdir=` (quoted or not), else this one.
fs::path submitted_from(const nlohmann::json& j) {
  const std::string script = j.value("script", std::string());
  std::error_code ec;
  if (script.empty() || !fs::exists(script, ec)) return fs::current_path();
  std::istringstream text(io::read_input_file(script, "batch script"));
  const std::string prefix = "#SBATCH --chdir=";
  for (std::string line; std::getline(text, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::string dir = line.substr(prefix.size());
    if (dir.size() >= 2 && dir.front() == '"' && dir.back() == '"')
      dir = dir.substr(1, dir.size() - 2);
    return dir;
  }
  return fs::current_path();
}

void read_tasks(const nlohmann::json& j, RecordedJob& job) {
  if (!j.contains("tasks")) {
    job.legacy = true;
    return;
  }
  const fs::path base = submitted_from(j);
  for (const auto& t : j.at("tasks")) {
    const fs::path dir = t.at("run_dir").get<std::string>();
    job.task_of_run[slurm_run_key((dir.is_absolute() ? dir : base / dir).string())] =
        t.at("task").get<int>();
  }
}

}  // namespace

std::string slurm_run_key(const std::string& run_dir) {
  return fs::absolute(run_dir).lexically_normal().string();
}

RecordedJob read_recorded_job(const std::string& out) {
  RecordedJob job;
  const fs::path file = slurm_dir(out) / "job.json";
  if (!fs::exists(file)) return job;
  try {
    const nlohmann::json j = io::read_json(file.string(), "job.json");
    job.id = j.at("job_id").get<std::string>();
    if (job.id.empty() || job.id.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("job_id '" + job.id + "' is not a Slurm job id");
    job.tag = j.value("tag", std::string());
    read_tasks(j, job);
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": unreadable (" + e.what() +
                             "); expected {\"job_id\": \"<digits>\", \"tasks\": [{\"task\": N, "
                             "\"run_dir\": \"...\"}, ...], ...}");
  }
  return job;
}

std::map<std::string, int> slurm_task_of_run(const std::string& out, bool* legacy) {
  const RecordedJob job = read_recorded_job(out);
  *legacy = job.legacy;
  return job.task_of_run;
}

// Unrecorded, the job could be submitted twice, so where job.json cannot be written the job is
// cancelled.
void record_job(const std::string& job, const SweepSpec& spec, const std::string& array,
                const std::vector<SweepRun>& runs, const std::vector<std::vector<int>>& packs) {
  const fs::path dir = slurm_dir(spec.out);
  nlohmann::json j;
  j["job_id"] = job;
  j["tag"] = slurm_tag(spec.out);
  j["submitted"] = now_text();
  j["sweep_file"] = spec.file;
  j["script"] = (dir / "sweep.sbatch").string();
  j["array"] = array;
  j["tasks"] = nlohmann::json::array();
  for (const auto& pack : packs)
    for (int i : pack)
      j["tasks"].push_back(
          {{"task", pack[0]}, {"run_dir", slurm_run_key(runs[size_t(i)].run_dir)}});
  try {
    io::write_file_atomically((dir / "job.json").string(), j.dump(2) + "\n");
  } catch (const std::exception& e) {
    run_slurm_command({"scancel", job});
    throw std::runtime_error(std::string(e.what()) + "; cancelled Slurm job " + job +
                             " again, since this sweep could not record it");
  }
}

}  // namespace minrnn::sweep
