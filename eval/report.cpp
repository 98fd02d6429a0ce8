#include "eval/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>

#include "eval/csv.h"
#include "eval/published.h"
#include "eval/stats.h"
#include "eval/svg.h"
#include "eval/sweep_runs.h"
#include "io/atomic_file.h"

namespace minrnn::eval {
namespace {

namespace fs = std::filesystem;

// The paper's column order (its rows come from eval/published.h); anything else follows
// alphabetically.
const std::vector<std::string> kBackboneOrder = {"mingru", "minlstm", "transformer"};

void sort_by(std::vector<std::string>& v, const std::vector<std::string>& order) {
  auto rank = [&](const std::string& s) {
    auto it = std::find(order.begin(), order.end(), s);
    return it == order.end() ? order.size() : size_t(it - order.begin());
  };
  std::sort(v.begin(), v.end(), [&](const std::string& a, const std::string& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
}

Cell cell_of(const std::vector<double>& seeds) {
  const MeanStd m = mean_std(seeds);
  Cell c;
  c.n = int(seeds.size());
  c.mean = m.mean;
  c.std = m.std;
  return c;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// "mean ± std (n=N)" over seeds; one seed has no spread to show, so no "± 0.0" suggests one.
std::string seeds_cell(const Cell& c) {
  const std::string spread = c.n > 1 ? " ± " + fmt(c.std) : "";
  return fmt(c.mean) + spread + " (n=" + std::to_string(c.n) + ")";
}

}  // namespace

std::vector<RunScore> collect_scores(const std::string& sweep_dir) {
  std::vector<RunScore> runs;
  for (const RunDir& run : list_run_dirs(sweep_dir)) {
    // A result is the evaluation of a finished run: an eval.json beside no done.json is of a run
    // still training (collect_unfinished lists it).
    const fs::path file = run.dir / "eval.json";
    if (!fs::exists(file) || !fs::exists(run.dir / "done.json")) continue;
    const FinalEvaluation e = read_final_evaluation(run.dir);
    if (!e.unreadable.empty()) throw std::runtime_error(file.string() + ": " + e.unreadable);
    RunScore r{run.dataset, run.backbone, run.dir.string(), run.seed, e.score};
    r.train_step = e.train_step;
    runs.push_back(r);
  }
  return runs;
}

std::vector<RunProgress> collect_unfinished(const std::string& sweep_dir) {
  std::vector<RunProgress> runs;
  for (const RunDir& run : list_run_dirs(sweep_dir)) {
    const fs::path& dir = run.dir;
    Series loss{"", {}, {}};
    const bool scored = fs::exists(dir / "eval.json") && fs::exists(dir / "done.json");
    if (scored || !read_csv_columns(dir / "metrics.csv", true, "step", "loss", -1, -1, &loss)) {
      continue;
    }
    RunProgress r{run.dataset, run.backbone, dir.string(), run.seed};
    r.step = static_cast<int64_t>(loss.x.back());
    Series evals{"", {}, {}};
    if (read_eval_curve(dir, &evals)) {
      r.last_eval = evals.y.back();
      r.last_eval_step = static_cast<int64_t>(evals.x.back());
    }
    runs.push_back(r);
  }
  return runs;
}

void set_aside_shorter_budgets(std::vector<RunScore>* runs, std::vector<RunProgress>* in_progress) {
  std::map<std::pair<std::string, std::string>, int64_t> budget;
  for (const auto& r : *runs) {
    int64_t& b = budget[{r.dataset, r.backbone}];
    b = std::max(b, r.train_step);
  }
  std::vector<RunScore> kept;
  for (const auto& r : *runs) {
    if (r.train_step >= budget.at({r.dataset, r.backbone})) {
      kept.push_back(r);
      continue;
    }
    in_progress->push_back(
        {r.dataset, r.backbone, r.run_dir, r.seed, r.train_step, r.normalized, r.train_step, true});
  }
  *runs = std::move(kept);
  std::sort(in_progress->begin(), in_progress->end(), [](const auto& a, const auto& b) {
    return std::tie(a.dataset, a.backbone, a.seed) < std::tie(b.dataset, b.backbone, b.seed);
  });
}

Table make_table(const std::vector<RunScore>& runs) {
  Table t;
  std::map<std::pair<std::string, std::string>, std::vector<double>> scores;
  std::map<std::pair<std::string, std::string>, int64_t> steps;
  for (const auto& r : runs) {
    scores[{r.dataset, r.backbone}].push_back(r.normalized);
    steps[{r.dataset, r.backbone}] = std::max(steps[{r.dataset, r.backbone}], r.train_step);
    if (std::find(t.datasets.begin(), t.datasets.end(), r.dataset) == t.datasets.end())
      t.datasets.push_back(r.dataset);
    if (std::find(t.backbones.begin(), t.backbones.end(), r.backbone) == t.backbones.end())
      t.backbones.push_back(r.backbone);
  }
  sort_by(t.datasets, published_datasets());
  sort_by(t.backbones, kBackboneOrder);
  for (const auto& [key, v] : scores) {
    t.cells[key] = cell_of(v);
    t.cells[key].steps = steps[key];
  }
  for (const auto& b : t.backbones) {
    std::vector<double> means;
    for (const auto& d : t.datasets) {
      auto it = t.cells.find({d, b});
      if (it != t.cells.end()) means.push_back(it->second.mean);
    }
    Cell avg;
    avg.n = int(means.size());
    for (double m : means) avg.mean += m / means.size();
    t.average[b] = avg;
  }
  return t;
}

// A dataset label as a Markdown table cell: a '|' in it would start another column.
std::string md_cell(const std::string& text) {
  std::string cell;
  for (char c : text) cell += c == '|' ? std::string("\\|") : std::string(1, c);
  return cell;
}

std::string table_markdown(const Table& t) {
  std::ostringstream md;
  md << "D4RL normalized score of the last checkpoint (mean over eval episodes per run), "
        "mean ± std over seeds (population std; one seed, its score alone); n = seeds.\n\n"
        "| dataset |";
  for (const auto& b : t.backbones) md << " " << b << " |";
  md << "\n|---|";
  for (size_t i = 0; i < t.backbones.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& d : t.datasets) {
    md << "| " << md_cell(d) << " |";
    for (const auto& b : t.backbones) {
      auto it = t.cells.find({d, b});
      if (it == t.cells.end())
        md << " – |";
      else
        md << " " << seeds_cell(it->second) << " |";
    }
    md << "\n";
  }
  md << "| **Average** |";
  for (const auto& b : t.backbones) {
    const Cell& a = t.average.at(b);
    md << " **" << fmt(a.mean) << "**";
    if (a.n != int(t.datasets.size())) md << " (" << a.n << " of " << t.datasets.size() << ")";
    md << " |";
  }
  md << "\n";
  // Cells trained for different budgets (a sweep part-way through `--extend`) are said to be.
  std::set<int64_t> steps;
  std::string budgets;
  for (const auto& [key, c] : t.cells) {
    if (c.steps == 0) continue;  // an eval.json from before train_step was recorded
    steps.insert(c.steps);
    budgets += (budgets.empty() ? "" : ", ") + md_cell(key.first) + " " + key.second + " " +
               std::to_string(c.steps);
  }
  if (steps.size() > 1)
    md << "\nThe cells' budgets differ (steps of the checkpoint scored): " << budgets << ".\n";
  return md.str();
}

std::string published_markdown(const Table& t) {
  auto ours = [&](const std::string& dataset, const std::string& backbone) {
    auto it = t.cells.find({dataset, backbone});
    return it == t.cells.end() ? std::string("–") : seeds_cell(it->second);
  };
  std::ostringstream rows;
  for (const auto& d : t.datasets) {
    const PublishedScores* p = find_published(d);
    if (p == nullptr) continue;
    rows << "| " << d << " | " << ours(d, "mingru") << " | " << fmt(p->mingru) << " ± "
         << fmt(p->mingru_std) << " | " << ours(d, "minlstm") << " | " << fmt(p->minlstm) << " ± "
         << fmt(p->minlstm_std) << " | " << ours(d, "transformer") << " | " << fmt(p->dt_paper)
         << " | " << fmt(p->corl_dt_last) << " |\n";
  }
  if (rows.str().empty()) return "";
  return "## Beside the published numbers\n\n"
         "Published: D4RL normalized scores on D4RL's own v2 files (REFERENCE.md §3). minGRU and "
         "minLSTM: Feng et al. 2024, Table 3, mean ± std over five seeds. DT: Chen et al. 2021; "
         "CORL's DT is scored at its last checkpoint, as ours are. Ours: mean ± std over seeds, "
         "on whichever files this sweep read (datasets made by `minrnn collect` are not D4RL's; "
         "their own scores are in docs/collect.md).\n\n"
         "| dataset | mingru | minGRU (paper) | minlstm | minLSTM (paper) | transformer | DT "
         "(paper) | DT (CORL, last) |\n|---|---|---|---|---|---|---|---|\n" +
         rows.str();
}

std::map<std::pair<std::string, std::string>, BudgetCheck> check_budgets(
    const std::vector<RunScore>& runs) {
  std::map<std::pair<std::string, std::string>, BudgetCheck> checks;
  for (const auto& r : runs) {
    Series e{"", {}, {}};
    if (!read_eval_curve(r.run_dir, &e)) continue;
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
    md << "| " << md_cell(key.first) << " | " << key.second << " | " << b.steps << " | " << b.runs
       << " | " << fmt(b.third_quarter) << " | " << fmt(b.last_quarter) << " | "
       << (b.last_quarter >= b.third_quarter ? "+" : "") << fmt(b.last_quarter - b.third_quarter)
       << " |\n";
  }
  return md.str();
}

std::string progress_markdown(const std::vector<RunProgress>& runs) {
  if (runs.empty()) return "";
  std::ostringstream md;
  md << "## In progress\n\nRuns without their final evaluation yet, so not in the table: the "
        "step each reached and its last evaluation during training (normalized; the run's own "
        "eval_episodes). Their curves are in plots/ beside the finished runs'. A run marked "
        "\"final\" finished at fewer steps than the other seeds of its dataset and backbone (a "
        "sweep extended with `--extend`, not through yet): its score waits for the same budget.\n\n"
        "| dataset | backbone | seed | step | last evaluation |\n|---|---|---|---|---|\n";
  for (const auto& r : runs) {
    md << "| " << md_cell(r.dataset) << " | " << r.backbone << " | " << r.seed << " | " << r.step
       << " | "
       << (std::isnan(r.last_eval)
               ? std::string("–")
               : fmt(r.last_eval) + (r.finished_shorter ? " (final, step " : " (step ") +
                     std::to_string(r.last_eval_step) + ")")
       << " |\n";
  }
  return md.str();
}

// An average over fewer datasets than the table has says so, as the Markdown's does.
std::string table_csv(const Table& t) {
  std::string csv = csv_line({"dataset", "backbone", "mean", "std", "seeds", "steps"});
  for (const auto& d : t.datasets) {
    for (const auto& b : t.backbones) {
      auto it = t.cells.find({d, b});
      if (it == t.cells.end()) continue;
      csv += csv_line({d, b, fmt(it->second.mean), fmt(it->second.std),
                       std::to_string(it->second.n), std::to_string(it->second.steps)});
    }
  }
  for (const auto& b : t.backbones) {
    const Cell& a = t.average.at(b);
    const std::string label = a.n == int(t.datasets.size())
                                  ? "Average"
                                  : "Average (" + std::to_string(a.n) + " of " +
                                        std::to_string(t.datasets.size()) + " datasets)";
    csv += csv_line({label, b, fmt(a.mean), "", "", ""});
  }
  return csv;
}

namespace {

// The loss and evaluation curves of each (dataset, backbone), finished runs' then those in
// progress, as dir/plots/<dataset>-<backbone>-{loss,score}.svg; each file's path into `written`.
void write_curves(const fs::path& dir, const std::vector<RunScore>& runs,
                  const std::vector<RunProgress>& unfinished, std::vector<std::string>* written) {
  struct Curve {
    std::string run_dir, name;
  };
  std::map<std::pair<std::string, std::string>, std::vector<Curve>> curves;
  for (const auto& r : runs) {
    curves[{r.dataset, r.backbone}].push_back({r.run_dir, "seed " + std::to_string(r.seed)});
  }
  for (const auto& r : unfinished) {
    curves[{r.dataset, r.backbone}].push_back(
        {r.run_dir,
         "seed " + std::to_string(r.seed) + " (at step " + std::to_string(r.step) + ")"});
  }
  fs::create_directories(dir / "plots");
  for (const auto& [key, runs_of_pair] : curves) {
    const auto& [d, b] = key;
    LinePlot loss{d + " / " + b + ": training loss", "optimizer step", "action MSE", {}, true};
    LinePlot score{d + " / " + b + ": evaluation during training",
                   "optimizer step",
                   "D4RL normalized score",
                   {},
                   false};
    for (const auto& c : runs_of_pair) {
      Series s{c.name, {}, {}};
      if (read_csv_columns(fs::path(c.run_dir) / "metrics.csv", true, "step", "loss", -1, -1, &s))
        loss.series.push_back(s);
      Series e{c.name, {}, {}};
      if (read_eval_curve(c.run_dir, &e)) score.series.push_back(e);
    }
    for (auto* p : {&loss, &score}) {
      if (p->series.empty()) continue;
      const fs::path f = dir / "plots" / (d + "-" + b + (p == &loss ? "-loss.svg" : "-score.svg"));
      write_svg(f.string(), *p);
      written->push_back(f.string());
    }
  }
}

}  // namespace

ReportFiles write_report(const std::string& sweep_dir) {
  auto runs = collect_scores(sweep_dir);
  auto unfinished = collect_unfinished(sweep_dir);
  set_aside_shorter_budgets(&runs, &unfinished);
  if (runs.empty() && unfinished.empty()) {
    throw std::runtime_error(sweep_dir +
                             ": no <dataset>/<backbone>/seed<S>/ run with an eval.json or a "
                             "metrics.csv found (has the sweep started?)");
  }
  const Table t = make_table(runs);
  ReportFiles files;
  const fs::path dir(sweep_dir);
  const std::string published = published_markdown(t);
  const std::string budgets = budget_markdown(check_budgets(runs));
  const std::string progress = progress_markdown(unfinished);
  files.markdown = "# Table 3 (" + sweep_dir + ")\n\n" +
                   (runs.empty() ? "No run has finished yet.\n" : table_markdown(t)) +
                   (published.empty() ? "" : "\n" + published) +
                   (budgets.empty() ? "" : "\n" + budgets) +
                   (progress.empty() ? "" : "\n" + progress);
  io::write_file_atomically((dir / "table3.md").string(), files.markdown);
  io::write_file_atomically((dir / "table3.csv").string(), table_csv(t));
  files.written = {(dir / "table3.md").string(), (dir / "table3.csv").string()};

  write_curves(dir, runs, unfinished, &files.written);
  return files;
}

}  // namespace minrnn::eval
