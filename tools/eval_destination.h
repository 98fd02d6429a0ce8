// Where `minrnn eval` writes its JSON, and what it may write over: decided before the episodes
// run, so that a destination it cannot use costs no rollout (cmd_eval.cpp asks again after it).
//
// <RUN>/eval.json is the run's result, the file Table 3 reads. Only the standard evaluation (none
// of the options that change the result given) or --replace writes it, and only of the run's own
// finished checkpoint (RUN or RUN/checkpoint.pt, with done.json beside it). An ad-hoc one (say
// --episodes 3 --target-return 9000) writes <RUN>/eval-episodes3-target9000.json instead; another
// checkpoint file (an --extend's checkpoint-step10000.pt) or a run still training writes
// <RUN>/eval-checkpoint-step10000.json or <RUN>/eval-step4000.json. The standard evaluation keeps
// an eval.json made with other settings (a sweep's --episodes 30) and writes beside it
// (eval-episodes10.json); --out replaces only an evaluation's JSON, never the run's. So trying
// something can never replace a reported number. Nor does any of them replace a file that is not
// an evaluation's JSON (a user's notes under one of those names).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "eval/rollout.h"

namespace minrnn::cli {

using EvalGiven = std::vector<std::pair<std::string, std::string>>;  // option name, value

// The folder that `run` (a run dir or a checkpoint file) keeps its evaluations in.
std::filesystem::path eval_folder(const std::string& run);

// Why an evaluation of `run` (a run dir or a checkpoint file) cannot be the run's result, as a
// name part ("checkpoint-step10000", "step4000"); "" when it can: the run's own checkpoint of a
// run finished at `step` (a done.json of another step: the run was extended since).
std::string not_the_result(const std::string& run, int64_t step);

// "eval-episodes3-seed5.json": the options given (after `partial`, where not ""), so ad-hoc
// results of different settings coexist.
std::string adhoc_name(EvalGiven given, const std::string& partial);

// Why the file at `path` is no evaluation's JSON that minrnn wrote (an object with its returns
// and mean_normalized), so an evaluation may not replace it: "" where it is one or none is there.
std::string why_not_an_evaluation(const std::string& path);

// Refuses (usage_error) an --out that cannot be written, that is not an evaluation's JSON, that is
// a run's result (eval.json), or that is a name of a run's own evaluations named by their settings
// (another run's eval-*.json; in this run's folder, `result`'s, one other than `own_name`, the
// name these settings make): the episodes there would read later as another run's or settings'.
void check_out_file(const std::string& out, const std::filesystem::path& result,
                    const std::string& own_name);

// Where an evaluation without --out goes, and whether the run's result was kept for being of
// other settings.
struct EvalOutput {
  std::string path;
  bool result_kept = false;
};

// The run's result (eval.json) for the standard evaluation (or `replace`) of a finished run's own
// checkpoint; else a name from the options `given` and, where the result or an ad-hoc file of
// that name is there already, the settings it was made with apart (so neither is replaced).
// `partial`: why the episodes are not of the run's own checkpoint ("" when they are); `engine`
// the one the rollout runs (rl::resolve_policy_engine).
EvalOutput choose_output(EvalGiven given, const std::string& partial, bool replace,
                         const std::filesystem::path& result, const eval::RolloutOptions& ro,
                         rl::PolicyEngine engine, int64_t step);

// Why an evaluation may not be written to `path`, its destination without --out ("" where it
// may): the file system refuses it, or a file there is not an evaluation's JSON.
std::string why_not_destination(const std::string& path);

}  // namespace minrnn::cli
