// `minrnn report SWEEP_DIR`: the paper's Table 3 from a sweep's runs, plus learning curves.
//
// Runs are found as SWEEP_DIR/<dataset>/<backbone>/seed<S>/eval.json (the layout `minrnn sweep`
// writes). Convention: each run's score is the D4RL normalized return of its LAST checkpoint,
// averaged over the eval episodes; a cell is mean ± std over seeds (population std, ddof 0).
// The Average row is the mean of a column's per-dataset means. Runs still training (a
// metrics.csv, no eval.json: a sweep across sittings) are listed apart with the step they reached,
// and their curves are drawn beside the finished runs', so a report can be made mid-sweep; so are
// runs finished at fewer steps than their (dataset, backbone)'s other seeds (a sweep part-way
// through `--extend`), so that no cell mixes budgets.
#pragma once
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eval/svg.h"
#include "eval/sweep_runs.h"

namespace minrnn::eval {

struct RunScore {
  std::string dataset, backbone, run_dir;
  int64_t seed = 0;
  double normalized = 0;   // mean over episodes
  int64_t train_step = 0;  // the evaluated checkpoint's step (eval.json); 0 where it names none
  // eval.json's: the Gymnasium version it was scored in (0 where it records none) and the
  // reference scores' source ("D4RL table (hopper)", a Minari dataset's own)
  int env_version = 0;
  std::string ref_source;
  bool made_here = false;  // env.json: minrnn made its dataset (`minrnn collect`, `data synth`)
  // What it was trained and evaluated with, seed and budget aside: config.yaml's keys, and
  // eval.json's episodes, target return, mode and environment as "eval <key>" (report_runs.cpp).
  std::map<std::string, std::string> settings;
};

struct Cell {
  double mean = 0, std = 0;
  int n = 0;          // seeds
  int64_t steps = 0;  // the runs' checkpoint step (0 where eval.json names none)
  std::string apart;  // the settings its seeds differ in (settings_apart), "" when none
  // Every seed scored in a v4 environment by D4RL's table (as eval.json says; one that says
  // nothing is): a cell the paper's numbers compare to.
  bool d4rl_scored = true;
  bool d4rl_data = true;  // no seed trained on a dataset minrnn made (env.json)
};

struct Table {
  std::vector<std::string> datasets, backbones;               // rows, columns (paper order first)
  std::map<std::pair<std::string, std::string>, Cell> cells;  // (dataset, backbone)
  std::map<std::string, Cell> average;  // per backbone: mean over its datasets (n = datasets)
};

// A run without its final evaluation yet.
struct RunProgress {
  std::string dataset, backbone, run_dir;
  int64_t seed = 0;
  int64_t step = 0;            // last step in metrics.csv
  double last_eval = NAN;      // last evaluation during training (normalized), NAN if none yet
  int64_t last_eval_step = 0;  // its step
  // Finished, but at fewer steps than another seed of its (dataset, backbone): a sweep extended to
  // a larger max_steps (`--extend`) and not through yet. last_eval is then its final evaluation.
  bool finished_shorter = false;
};

// A run whose last attempt failed (its failed.json, written by `minrnn sweep`), whose result
// cannot be read (an eval.json of a NaN score, one edited by hand), or that is in another run's
// folder (why_misplaced): not in the table.
inline const std::string kMisplacedPhase = "folder";
struct RunFailure {
  std::string dataset, backbone, run_dir;
  int64_t seed = 0;
  // "train" or "eval" (failed.json); "result" for an unreadable one; kMisplacedPhase for a run in
  // another's folder, whose (dataset, backbone) is no row or column of the table
  std::string phase = "?";
  int exit_code = -1;      // failed.json's; -1 where it records none, or for a result
  std::string unreadable;  // why its eval.json is no result or it is misplaced, naming the file
};

// What the run in `run_dir` was trained with, seed and budget aside: config.yaml's keys as
// training reads them (values, not their text; a key an older file lacks at its default) but those
// that leave what it learns alone (device, cadences), and its data's fingerprint (env.json). Where
// config.yaml is missing or does not read, kConfigFileKey ("missing" / "unreadable") instead of
// its keys. With `scored_during_training`, also the keys that score its evaluations during
// training (eval_episodes, target_return): what `compare` reads (evals.csv), where the report
// reads eval.json's own.
std::map<std::string, std::string> training_settings(const std::filesystem::path& run_dir,
                                                     bool scored_during_training = false);
inline const std::string kConfigFileKey = "config.yaml";  // the settings' key of the file itself
// The value of `key` in a run's training_settings as two runs' are compared: "(none)" where the run
// has none (a key of a newer minrnn), nullopt for a config key of a run whose config.yaml could not
// be read (unknown, not different: kConfigFileKey's own "missing" / "read" says it once, not each
// key).
std::optional<std::string> compared_setting(const std::map<std::string, std::string>& settings,
                                            const std::string& key);
// A sweep's run dirs as the report reads them, each with why_misplaced read once: the three
// collections below then agree on every run, where a live sweep rewriting a config.yaml between
// three reads could have put a run in two of them or none (review 52).
struct ListedRun {
  RunDir run;
  std::string misplaced;  // why_misplaced(run)
};
std::vector<ListedRun> list_report_runs(const std::string& sweep_dir);
// Every finished run with a readable eval.json and no failed.json under `sweep_dir`.
std::vector<RunScore> collect_scores(const std::vector<ListedRun>& listed);
// Every run under `sweep_dir` with a metrics.csv row, no eval.json and no failed.json (its last
// evaluation: fill_last_evaluations, from its curves).
std::vector<RunProgress> collect_unfinished(const std::vector<ListedRun>& listed);
// Every run under `sweep_dir` with a failed.json, or finished with an eval.json that is no result,
// or in another run's folder (why_misplaced).
std::vector<RunFailure> collect_failed(const std::vector<ListedRun>& listed);
// The same, listing the runs themselves.
inline std::vector<RunScore> collect_scores(const std::string& sweep_dir) {
  return collect_scores(list_report_runs(sweep_dir));
}
inline std::vector<RunProgress> collect_unfinished(const std::string& sweep_dir) {
  return collect_unfinished(list_report_runs(sweep_dir));
}
inline std::vector<RunFailure> collect_failed(const std::string& sweep_dir) {
  return collect_failed(list_report_runs(sweep_dir));
}
// The settings the runs differ in, "key a / b; key2 c / d" ("" when none): a cell whose seeds
// trained or were evaluated otherwise is no mean over seeds of one thing.
std::string settings_apart(const std::vector<const RunScore*>& seeds);
// Moves every run finished at fewer steps than another seed of its (dataset, backbone) from
// `runs` to `in_progress` (finished_shorter), so no cell of the table mixes budgets.
void set_aside_shorter_budgets(std::vector<RunScore>* runs, std::vector<RunProgress>* in_progress);
std::string progress_markdown(const std::vector<RunProgress>& runs);
std::string failed_markdown(const std::vector<RunFailure>& runs);  // "" when none
// `unscored`: the (dataset, backbone) of runs in progress or failed, whose rows and columns the
// table keeps ("–"), so an Average says over how many of the sweep's datasets it is.
Table make_table(const std::vector<RunScore>& runs,
                 const std::vector<std::pair<std::string, std::string>>& unscored = {});
std::string table_markdown(const Table& table);
std::string table_csv(const Table& table);
// table3.json: the cells with their seeds' own scores, the averages, the runs in progress, the
// failed ones and the unreadable curve files (eval/report_json.cpp).
std::string report_json(const Table& table, const std::vector<RunScore>& runs,
                        const std::vector<RunProgress>& unfinished,
                        const std::vector<RunFailure>& failed,
                        const std::vector<std::string>& unreadable_curves);
// Our cells beside the published ones (eval/published.h) for every row the paper's Table 3 has;
// empty when it has none of the table's datasets.
std::string published_markdown(const Table& table);

// Each run's learning curves (finished and in progress), read once for the report: its training
// loss (metrics.csv) and its evaluations during training (evals.csv), by run dir. A file that
// cannot be read (a hand edit, a torn copy) is listed in `unreadable`, its curve left out: the
// table's scores are eval.json's, and one damaged file of a long sweep does not stop its report.
struct SweepCurves {
  std::map<std::string, Series> loss, evals;  // by run dir; absent where no point was read
  std::vector<std::string> unreadable;        // why, naming the file ("FILE:LINE: …")
};
SweepCurves read_curves(const std::vector<RunScore>& runs,
                        const std::vector<RunProgress>& unfinished);
// One run's evaluations during training (evals.csv) as read_curves reads them, for `compare` too:
// false where it has none yet, or where the file cannot be read (a folder in its place, a cell that
// is no number or missing from its row, a NaN score; of a `finished` run, which wrote it whole and
// evaluated at its last step, a file missing, cut short or ending before done.json's step), then
// `unreadable` says why, naming the file.
bool read_run_evals(const std::string& run_dir, bool finished, Series* out,
                    std::vector<std::string>* unreadable);
std::string unreadable_markdown(const std::vector<std::string>& unreadable);  // "" when none
// Each run in progress's last evaluation during training, from its evals.csv as read (a run
// finished at a smaller budget keeps its final score).
void fill_last_evaluations(std::vector<RunProgress>* unfinished, const SweepCurves& curves);

// Whether a budget was long enough, from the evaluations during training (`eval_every`) of the
// finished runs of one (dataset, backbone): each run's mean over the third quarter of its steps
// and over the last quarter, then their means over the runs. A budget its curves show flat has a
// change between the two within the evaluations' noise; a rising curve has not.
struct BudgetCheck {
  int64_t steps = 0;  // the runs' last evaluation step (the largest, if they differ)
  int runs = 0;       // runs with evaluations in both quarters
  double third_quarter = 0, last_quarter = 0;
};
std::map<std::pair<std::string, std::string>, BudgetCheck> check_budgets(
    const std::vector<RunScore>& runs, const SweepCurves& curves);
// A table of them ("" when no run has evaluations in both quarters).
std::string budget_markdown(const std::map<std::pair<std::string, std::string>, BudgetCheck>& c);
// The plots of a report: dir/plots/<dataset>-<backbone>-{loss,score}.svg of each (dataset,
// backbone) with a curve that reads, finished runs' then those in progress, rendered (write_report
// writes them all or none with the tables), and the plots an earlier report made that this one does
// not replace: none of their curves reads now, or every run of theirs failed. Those are removed
// once the new files are in (left, they would read as today's).
struct CurvePlots {
  std::vector<std::pair<std::string, std::string>> svgs;  // path, SVG text
  std::vector<std::string> stale;                         // paths; most do not exist
};
CurvePlots plot_curves(const std::filesystem::path& dir, const std::vector<RunScore>& runs,
                       const std::vector<RunProgress>& unfinished,
                       const std::vector<RunFailure>& failed, const SweepCurves& curves);

struct ReportFiles {
  std::vector<std::string> written;
  std::vector<std::string> removed;  // an earlier report's plots this one does not replace
  std::string markdown;              // what table3.md holds
  int unreadable_curves = 0;         // curve files left out (SweepCurves::unreadable)
};
// Writes table3.md (our table, the published comparison, the budget check, the runs in progress
// and failed, the curve files that could not be read), table3.csv, table3.json and
// plots/<dataset>-<backbone>-{loss,score}.svg into sweep_dir: the three tables all or none (each
// checked writable first). Throws when no run has started.
ReportFiles write_report(const std::string& sweep_dir);

}  // namespace minrnn::eval
