// The learning curves a report reads (eval/report.h): each run's training loss and evaluations
// during training, read once; the budget check made from them; their plots.
#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "eval/csv.h"
#include "eval/report.h"
#include "eval/stats.h"
#include "eval/svg.h"
#include "io/csv.h"
#include "rl/run_dir.h"
#include "rl/run_files.h"

namespace minrnn::eval {

namespace fs = std::filesystem;

namespace {

// Where reading a curve file would find nothing without a word: a folder or device in its place;
// for a finished run, which wrote it whole, a file missing or whose last line is cut short (a
// copy stopped early). "" where the file can be read.
std::string why_no_curve_file(const fs::path& file, bool finished) {
  std::error_code ec;
  const fs::file_status st = fs::status(file, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) return file.string() + ": not a file";
  if (!finished) return "";
  if (!fs::exists(st)) return file.string() + ": missing (a finished run has written it)";
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  char last = '\n';
  if (in.tellg() > 0 && in.seekg(-1, std::ios::end)) in.get(last);
  return last == '\n' ? "" : file.string() + ": its last line is cut short (a copy stopped early?)";
}

// Reads one curve, `read` from `file`, into `s`: false where it has no point, or cannot be read
// (then `unreadable` says why, naming the file).
template <typename Read>
bool read_curve(const fs::path& file, bool finished, Read read, Series* s,
                std::vector<std::string>* unreadable) {
  if (const std::string why = why_no_curve_file(file, finished); !why.empty()) {
    unreadable->push_back(why);
    return false;
  }
  try {
    return read(s);
  } catch (const std::exception& e) {
    unreadable->push_back(e.what());  // which names the file
    return false;
  }
}

}  // namespace

bool read_run_evals(const std::string& run_dir, bool finished, Series* out,
                    std::vector<std::string>* unreadable) {
  const rl::RunFiles files(run_dir);
  const size_t said = unreadable->size();
  const bool read = read_curve(
      files.evals, finished, [&](Series* s) { return read_eval_curve(run_dir, s); }, out,
      unreadable);
  if (!finished || unreadable->size() > said) return read;
  // A finished run evaluated at its last step (rl/training_run.cpp): a file that ends before it
  // lost whole lines, which moved compare's window without a word (a walk, 2026-11-30).
  const int64_t last = rl::finished_step(files);
  const int64_t ends = read ? static_cast<int64_t>(out->x.back()) : 0;
  if (last <= 0 || ends == last) return read;
  unreadable->push_back(
      files.evals.string() + ": " +
      (read ? "its last row is of step " + std::to_string(ends) : std::string("no row")) +
      ", but the run finished at step " + std::to_string(last) +
      " (done.json) with an evaluation there (rows lost?)");
  out->x.clear();
  out->y.clear();
  return false;
}

SweepCurves read_curves(const std::vector<RunScore>& runs,
                        const std::vector<RunProgress>& unfinished) {
  std::vector<std::pair<std::string, bool>> dirs;  // and whether the run finished
  for (const auto& r : runs) dirs.emplace_back(r.run_dir, true);
  for (const auto& r : unfinished) dirs.emplace_back(r.run_dir, r.finished_shorter);
  SweepCurves curves;
  for (const auto& [dir, finished] : dirs) {
    const fs::path metrics = rl::RunFiles(dir).metrics;
    Series loss{"", {}, {}}, evals{"", {}, {}};
    const auto read_loss = [&](Series* s) {
      return io::read_csv_columns(metrics, rl::kStepColumn, rl::kLossColumn, rl::metrics_columns(),
                                  &s->x, &s->y);
    };
    if (read_curve(metrics, finished, read_loss, &loss, &curves.unreadable)) {
      curves.loss[dir] = std::move(loss);
    }
    if (read_run_evals(dir, finished, &evals, &curves.unreadable))
      curves.evals[dir] = std::move(evals);
  }
  return curves;
}

void fill_last_evaluations(std::vector<RunProgress>* unfinished, const SweepCurves& curves) {
  for (RunProgress& r : *unfinished) {
    const auto found = curves.evals.find(r.run_dir);
    if (r.finished_shorter || found == curves.evals.end()) continue;
    r.last_eval = found->second.y.back();
    r.last_eval_step = static_cast<int64_t>(found->second.x.back());
  }
}

std::string unreadable_markdown(const std::vector<std::string>& unreadable) {
  if (unreadable.empty()) return "";
  std::ostringstream md;
  md << "## Unreadable curves\n\nFiles of these runs could not be read (edited by hand, or cut "
        "short by a copy): their curves are left out of plots/ and of the budget check. The "
        "table's scores are eval.json's, not theirs.\n\n";
  for (const std::string& why : unreadable) md << "- " << why << "\n";
  return md.str();
}

std::map<std::pair<std::string, std::string>, BudgetCheck> check_budgets(
    const std::vector<RunScore>& runs, const SweepCurves& curves) {
  std::map<std::pair<std::string, std::string>, BudgetCheck> checks;
  for (const auto& r : runs) {
    const auto found = curves.evals.find(r.run_dir);
    if (found == curves.evals.end()) continue;
    const Series& e = found->second;
    const double last = e.x.back();
    double sum[2] = {0, 0};
    int n[2] = {0, 0};
    for (size_t i = 0; i < e.x.size(); ++i) {
      if (e.x[i] <= last / 2) continue;
      const int quarter = e.x[i] <= 0.75 * last ? 0 : 1;
      sum[quarter] += e.y[i];
      ++n[quarter];
    }
    if (n[0] == 0 || n[1] == 0) continue;
    BudgetCheck& c = checks[{r.dataset, r.backbone}];
    c.steps = std::max(c.steps, static_cast<int64_t>(last));
    c.third_quarter += sum[0] / n[0];  // summed here, divided by the runs below
    c.last_quarter += sum[1] / n[1];
    ++c.runs;
  }
  for (auto& entry : checks) {
    entry.second.third_quarter /= entry.second.runs;
    entry.second.last_quarter /= entry.second.runs;
  }
  return checks;
}

std::string budget_markdown(const std::map<std::pair<std::string, std::string>, BudgetCheck>& c) {
  if (c.empty()) return "";
  std::ostringstream md;
  md << "## Is the budget flat?\n\n"
        "Evaluations during training (normalized), each finished run's mean over the third and "
        "over the last quarter of its steps, averaged over runs. A budget its curves show flat "
        "changes within the evaluations' noise between the two; a rising one does not.\n\n"
        "| dataset | backbone | steps | runs | third quarter | last quarter | change |\n"
        "|---|---|---|---|---|---|---|\n";
  for (const auto& [key, b] : c) {
    md << "| " << markdown_cell(key.first) << " | " << key.second << " | " << b.steps << " | "
       << b.runs << " | " << score_text(b.third_quarter) << " | " << score_text(b.last_quarter)
       << " | " << (b.last_quarter >= b.third_quarter ? "+" : "")
       << score_text(b.last_quarter - b.third_quarter) << " |\n";
  }
  return md.str();
}

CurvePlots plot_curves(const fs::path& dir, const std::vector<RunScore>& runs,
                       const std::vector<RunProgress>& unfinished,
                       const std::vector<RunFailure>& failed, const SweepCurves& curves) {
  struct Curve {
    std::string run_dir, name;
  };
  std::map<std::pair<std::string, std::string>, std::vector<Curve>> of_pair;
  for (const auto& r : runs) {
    of_pair[{r.dataset, r.backbone}].push_back({r.run_dir, "seed " + std::to_string(r.seed)});
  }
  for (const auto& r : unfinished) {
    of_pair[{r.dataset, r.backbone}].push_back(
        {r.run_dir,
         "seed " + std::to_string(r.seed) + " (at step " + std::to_string(r.step) + ")"});
  }
  for (const auto& r : failed) of_pair[{r.dataset, r.backbone}];  // its plots, if any, are stale
  CurvePlots plots;
  for (const auto& [key, runs_of_pair] : of_pair) {
    const auto& [d, b] = key;
    LinePlot loss{d + " / " + b + ": training loss", "optimizer step", "action MSE", {}, true};
    // Every evaluation evals.csv holds: those during training and the one at its end (alone
    // where eval_every is 0).
    LinePlot score{d + " / " + b + ": evaluations as it trained (evals.csv)",
                   "optimizer step",
                   "D4RL normalized score",
                   {},
                   false};
    for (const auto& c : runs_of_pair) {
      for (auto [plot, series] :
           {std::pair{&loss, &curves.loss}, std::pair{&score, &curves.evals}}) {
        const auto found = series->find(c.run_dir);
        if (found == series->end()) continue;
        plot->series.push_back(found->second);
        plot->series.back().name = c.name;
      }
    }
    for (auto* p : {&loss, &score}) {
      const fs::path f = dir / "plots" / (d + "-" + b + (p == &loss ? "-loss.svg" : "-score.svg"));
      if (p->series.empty())
        plots.stale.push_back(f.string());
      else
        plots.svgs.emplace_back(f.string(), render_svg(*p));
    }
  }
  return plots;
}

}  // namespace minrnn::eval
