#include "eval/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "eval/csv.h"
#include "eval/published.h"
#include "eval/stats.h"
#include "eval/svg.h"
#include "eval/sweep_runs.h"
#include "rl/run_files.h"

namespace minrnn::eval {
namespace {

namespace fs = std::filesystem;

// Our columns: the paper's two minimal RNNs, then the Transformer (DT) it compares them with (its
// own Table 3 puts DT first); anything else follows alphabetically. Rows follow the paper
// (eval/published.h).
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

// "mean ± std (n=N)" over seeds (mean_std_text). A cell whose seeds differ in their settings is
// marked † (table_markdown says how).
std::string seeds_cell(const Cell& c) {
  return mean_std_text(c.mean, c.std, c.n) + " (n=" + std::to_string(c.n) + ")" +
         (c.apart.empty() ? "" : " †");
}

}  // namespace

Table make_table(const std::vector<RunScore>& runs,
                 const std::vector<std::pair<std::string, std::string>>& unscored) {
  Table t;
  // Rows and columns of runs not scored (in progress, failed): their cells "–", and an Average
  // that leaves them out says over how many of the sweep's datasets it is.
  for (const auto& [dataset, backbone] : unscored) {
    if (std::find(t.datasets.begin(), t.datasets.end(), dataset) == t.datasets.end())
      t.datasets.push_back(dataset);
    if (std::find(t.backbones.begin(), t.backbones.end(), backbone) == t.backbones.end())
      t.backbones.push_back(backbone);
  }
  std::map<std::pair<std::string, std::string>, std::vector<double>> scores;
  std::map<std::pair<std::string, std::string>, int64_t> steps;
  std::map<std::pair<std::string, std::string>, std::vector<const RunScore*>> seeds;
  for (const auto& r : runs) {
    scores[{r.dataset, r.backbone}].push_back(r.normalized);
    seeds[{r.dataset, r.backbone}].push_back(&r);
    steps[{r.dataset, r.backbone}] = std::max(steps[{r.dataset, r.backbone}], r.train_step);
    if (std::find(t.datasets.begin(), t.datasets.end(), r.dataset) == t.datasets.end())
      t.datasets.push_back(r.dataset);
    if (std::find(t.backbones.begin(), t.backbones.end(), r.backbone) == t.backbones.end())
      t.backbones.push_back(r.backbone);
  }
  sort_by(t.datasets, published_datasets());
  sort_by(t.backbones, kBackboneOrder);
  for (const auto& [key, v] : scores) {
    Cell& c = t.cells[key] = cell_of(v);
    c.steps = steps[key];
    c.apart = settings_apart(seeds[key]);
    // An eval.json from before env_version and ref_source were recorded was D4RL-scored in v4.
    for (const RunScore* r : seeds[key]) {
      const bool v4 = r->env_version == 0 || r->env_version == 4;
      const bool table = r->ref_source.empty() || r->ref_source.rfind("D4RL table", 0) == 0;
      c.d4rl_scored = c.d4rl_scored && v4 && table;
      c.d4rl_data = c.d4rl_data && !r->made_here;
    }
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
    md << "| " << markdown_cell(d) << " |";
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
    if (a.n == 0) {
      md << " – |";
      continue;
    }
    md << " **" << score_text(a.mean) << "**";
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
    budgets += (budgets.empty() ? "" : ", ") + markdown_cell(key.first) + " " + key.second + " " +
               std::to_string(c.steps);
  }
  if (steps.size() > 1)
    md << "\nThe cells' budgets differ (steps of the checkpoint scored): " << budgets << ".\n";
  // A mean over seeds of one thing: seeds trained or evaluated otherwise are said to be.
  std::string apart;
  for (const auto& [key, c] : t.cells) {
    if (!c.apart.empty())
      apart += "\n- " + markdown_cell(key.first) + " " + key.second + ": " + c.apart;
  }
  if (!apart.empty()) {
    md << "\n† Seeds of these cells were trained or evaluated with other settings (config.yaml, "
          "eval.json), not only another seed:"
       << apart << "\n";
  }
  return md.str();
}

namespace {

// One row of "Beside the published numbers": ours beside the paper's for each backbone.
std::string published_row(const std::string& label, const PublishedScores& p,
                          const std::function<std::string(const std::string&)>& ours) {
  auto with_std = [](double mean, double std) {
    return score_text(mean) + (std > 0 ? " ± " + score_text(std) : "");
  };
  return "| " + label + " | " + ours("mingru") + " | " + with_std(p.mingru, p.mingru_std) + " | " +
         ours("minlstm") + " | " + with_std(p.minlstm, p.minlstm_std) + " | " +
         ours("transformer") + " | " + score_text(p.dt_table3) + " | " + score_text(p.dt_chen) +
         " | " + score_text(p.corl_dt_last) + " | " + score_text(p.decision_mamba) + " |\n";
}

}  // namespace

std::string published_markdown(const Table& t) {
  bool other_scoring = false, made_here_cells = false, any_ours = false;
  auto ours = [&](const std::string& dataset, const std::string& backbone) {
    auto it = t.cells.find({dataset, backbone});
    if (it == t.cells.end()) return std::string("–");
    if (!it->second.d4rl_scored) {
      other_scoring = true;
      return std::string("– (not D4RL's)");
    }
    if (!it->second.d4rl_data) {
      made_here_cells = true;
      return std::string("– (data made here)");
    }
    any_ours = true;
    return seeds_cell(it->second);
  };
  std::string rows;
  int published_rows = 0;
  for (const auto& d : t.datasets) {
    const PublishedScores* p = find_published(d);
    if (p == nullptr) continue;
    ++published_rows;
    rows += published_row(d, *p, [&](const std::string& b) { return ours(d, b); });
  }
  if (!any_ours && !other_scoring && !made_here_cells) return "";
  // The paper's Average row is over its nine datasets: ours beside it only where a backbone has a
  // D4RL-scored cell in each of them.
  if (published_rows == static_cast<int>(published_datasets().size())) {
    rows += published_row("**Average**", published_average(), [&](const std::string& b) {
      double sum = 0;
      for (const std::string& d : published_datasets()) {
        auto it = t.cells.find({d, b});
        if (it == t.cells.end() || !it->second.d4rl_scored || !it->second.d4rl_data)
          return std::string("–");
        sum += it->second.mean;
      }
      return "**" + score_text(sum / published_datasets().size()) + "**";
    });
  }
  const std::string other =
      other_scoring ? " A cell marked \"not D4RL's\" was scored in another environment or by "
                      "other reference scores than D4RL's v4 table (a Minari dataset's own), so "
                      "its numbers do not compare; it is in the table above."
                    : "";
  const std::string made_here =
      made_here_cells
          ? " A cell marked \"data made here\" was trained on a dataset `minrnn collect` "
            "or `minrnn data synth` made (its env.json says so), under a D4RL name perhaps, "
            "not on D4RL's file; it is in the table above."
          : "";
  return "## Beside the published numbers\n\n"
         "Published: D4RL normalized scores on D4RL's own v2 files. minGRU, minLSTM, DT and "
         "DMamba: Feng et al. 2024, Table 3 (minGRU and minLSTM mean ± std over five seeds; its DT "
         "and DMamba from the Decision Mamba and Aaren papers); DT (Chen et al. 2021): the DT "
         "paper's own; CORL's DT (Tarasov et al. 2022) is scored at its last checkpoint, as ours "
         "are. The paper follows Ota's Decision Mamba code, which evaluates at five target returns "
         "(docs/agent.md, \"Configs\"); ours at one. Ours: mean ± std over seeds, "
         "on whichever files this sweep read (datasets made by `minrnn collect` are not D4RL's; "
         "their own scores are in docs/collect.md)." +
         other + made_here +
         "\n\n"
         "| dataset | mingru | minGRU (paper) | minlstm | minLSTM (paper) | transformer | DT "
         "(paper) | DT (Chen et al.) | DT (CORL, last) | DMamba (paper) |\n"
         "|---|---|---|---|---|---|---|---|---|---|\n" +
         rows;
}

std::string progress_markdown(const std::vector<RunProgress>& runs) {
  if (runs.empty()) return "";
  std::ostringstream md;
  md << "## In progress\n\nRuns not yet finished (done.json) and evaluated (eval.json) at "
        "their budget, so not in the table: the "
        "step each reached and its last evaluation during training (normalized; the run's own "
        "eval_episodes). Their curves are in plots/ beside the finished runs'. A run marked "
        "\"final\" finished at fewer steps than the other seeds of its dataset and backbone (a "
        "sweep extended with `--extend`, not through yet): its score waits for the same budget.\n\n"
        "| dataset | backbone | seed | step | last evaluation |\n|---|---|---|---|---|\n";
  for (const auto& r : runs) {
    md << "| " << markdown_cell(r.dataset) << " | " << r.backbone << " | " << r.seed << " | "
       << r.step << " | "
       << (std::isnan(r.last_eval)
               ? std::string("–")
               : score_text(r.last_eval) + (r.finished_shorter ? " (final, step " : " (step ") +
                     std::to_string(r.last_eval_step) + ")")
       << " |\n";
  }
  return md.str();
}

std::string failed_markdown(const std::vector<RunFailure>& runs) {
  if (runs.empty()) return "";
  std::ostringstream md;
  md << "## Failed\n\nRuns whose last attempt failed (their failed.json: the next `minrnn sweep` "
        "starts them again), whose result cannot be read, or that are in another run's folder "
        "(phase folder; the file is named), so not in the table.\n\n"
        "| dataset | backbone | seed | phase | why |\n|---|---|---|---|---|\n";
  for (const auto& r : runs) {
    const std::string code = r.exit_code >= 0 ? std::to_string(r.exit_code) : "?";
    const rl::RunFiles files(r.run_dir);
    const std::string why =
        r.unreadable.empty() ? "exit " + code + ", see " + files.log.string() : r.unreadable;
    md << "| " << markdown_cell(r.dataset) << " | " << r.backbone << " | " << r.seed << " | "
       << r.phase << " | " << markdown_cell(why) << " |\n";
  }
  return md.str();
}

// Three decimals (the Markdown's one hides what a script may want); a cell of one seed has no
// std; an Average row is "Average" whatever it averages, `datasets` saying over how many.
std::string table_csv(const Table& t) {
  std::string csv = io::csv_line(
      {"dataset", "backbone", "mean", "std", "seeds", "steps", "datasets", "settings_apart"});
  for (const auto& d : t.datasets) {
    for (const auto& b : t.backbones) {
      auto it = t.cells.find({d, b});
      if (it == t.cells.end()) continue;
      const Cell& c = it->second;
      csv += io::csv_line({d, b, score_text(c.mean, 3), c.n > 1 ? score_text(c.std, 3) : "",
                           std::to_string(c.n), std::to_string(c.steps), "", c.apart});
    }
  }
  for (const auto& b : t.backbones) {
    const Cell& a = t.average.at(b);
    if (a.n == 0) continue;  // a backbone none of whose runs is scored yet: nothing to average
    csv += io::csv_line({"Average", b, score_text(a.mean, 3), "", "", "", std::to_string(a.n), ""});
  }
  return csv;
}

}  // namespace minrnn::eval
