// Which `slurm.sbatch_args` items minrnn sweep refuses (sweep/slurm_files.h): sbatch reads each
// #SBATCH line with getopt_long, so an abbreviation (--arr=5), a short option with its value
// attached (-o/tmp/x) or several options in one item would otherwise slip past a plain comparison
// of names.
#include <cctype>
#include <string>
#include <vector>

#include "sweep/slurm_files.h"

namespace minrnn::sweep {
namespace {

// Long options the batch script relies on, and why. The script sets its array, log, directory,
// name, comment (the sweep's tag) and requeue/signal protocol itself; --wait, --hold, --test-only,
// --help, --usage and --version leave nothing queued (or nothing that runs) after sbatch's exit
// 0; --export can drop the environment the tasks need (PATH, D4RL_DATASET_DIR); --clusters hides
// the job from the squeue that --status asks; --time is slurm.time, which slurm.signal_before is
// checked against.
struct Reserved {
  const char* name;
  const char* use;
};
const std::vector<Reserved>& reserved_long() {
  static const std::vector<Reserved> names = {
      {"array", ""},     {"output", ""},   {"error", ""},
      {"open-mode", ""}, {"requeue", ""},  {"no-requeue", ""},
      {"signal", ""},    {"parsable", ""}, {"wrap", ""},
      {"chdir", ""},     {"job-name", ""}, {"comment", ""},
      {"wait", ""},      {"hold", ""},     {"test-only", ""},
      {"help", ""},      {"usage", ""},    {"version", ""},
      {"export", ""},    {"clusters", ""}, {"time", "give slurm.time instead"}};
  return names;
}

// sbatch's short options that take a value (the rest of the item is then that value), and those
// it reserves (as the long ones above: -a --array, -o, -e, -D, -J, -W --wait, -H --hold, -M
// --clusters, -t --time, -h --help, -u --usage, -V --version).
constexpr const char* kShortWithValue = "AabBCcDdeFGiJLMmNnopqStwx";
constexpr const char* kShortReserved = "aoeDJWHMthuV";

std::string problem_of_long(const std::string& item) {
  const std::string name = item.substr(2, item.find('=') - 2);
  for (const Reserved& r : reserved_long()) {
    // getopt_long takes any unambiguous prefix of a long option for it: refuse every prefix.
    if (std::string(r.name).compare(0, name.size(), name) != 0) continue;
    const std::string what = name == r.name
                                 ? "'--" + name + "'"
                                 : "'--" + name + "' (an abbreviation of --" + r.name + ")";
    return "'" + item + "': " + what + " is set by minrnn sweep itself" +
           (*r.use ? std::string("; ") + r.use : std::string());
  }
  return "";
}

std::string problem_of_short(const std::string& item) {
  // getopt reads "-Qo/tmp/x" as -Q, then -o with the value "/tmp/x".
  for (size_t i = 1; i < item.size(); ++i) {
    const char c = item[i];
    if (std::string(kShortReserved).find(c) != std::string::npos)
      return "'" + item + "': -" + std::string(1, c) + " is set by minrnn sweep itself";
    if (std::string(kShortWithValue).find(c) != std::string::npos) break;
  }
  return "";
}

}  // namespace

std::string sbatch_arg_problem(const std::string& item) {
  const bool is_long = item.rfind("--", 0) == 0;
  const size_t letter = is_long ? 2 : 1;
  if (item.size() <= letter || item[0] != '-' ||
      !std::isalpha(static_cast<unsigned char>(item[letter])))
    return "'" + item + "' is not an sbatch option";
  for (char c : item) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isspace(u) || std::iscntrl(u))
      return "'" + item + "' holds whitespace: give one option per item";
    // sbatch's #SBATCH reader takes these as quoting, escaping and the start of a comment.
    if (c == '"' || c == '\\' || c == '#')
      return "'" + item + "' holds '" + std::string(1, c) + "', which a #SBATCH line cannot carry";
  }
  return is_long ? problem_of_long(item) : problem_of_short(item);
}

}  // namespace minrnn::sweep
