#include "eval/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "eval/csv.h"
#include "eval/report.h"
#include "eval/stats.h"
#include "eval/sweep_runs.h"
#include "rl/run_files.h"

namespace minrnn::eval {
namespace {

namespace fs = std::filesystem;

const std::string verdict_moved = "moved (p < 0.05)";

using Curve = std::map<int64_t, double>;  // evaluation step → normalized return
struct RunCurve {
  int64_t seed = 0;
  Curve curve;
  std::map<std::string, std::string> settings;  // training_settings, scored during training
};
using CellKey = std::pair<std::string, std::string>;  // dataset, backbone
using Cells = std::map<CellKey, std::vector<RunCurve>>;

// One sweep's cells, and how many runs of each were left out unreadable: a cell whose runs all
// were is no cell of the side, but not one the sweep has no run of either (review 51).
struct Side {
  Cells cells;
  std::map<CellKey, int> runs_left_out;
};

// Each run's evaluations during training, by dataset and backbone; a run with no complete row yet
// is left out, and so is one whose evals.csv cannot be read (its seed vanished from a side without
// a word, or stopped the comparison of every cell) or that is in another run's folder
// (why_misplaced), why into `left_out`.
Side read_side(const std::string& sweep_dir, std::vector<std::string>* left_out) {
  Side side;
  for (const RunDir& run : list_run_dirs(sweep_dir)) {
    const rl::RunFiles files(run.dir);
    if (fs::exists(files.failed)) continue;
    Series evals{"", {}, {}};
    const size_t named = left_out->size();
    if (const std::string why = why_misplaced(run); !why.empty()) left_out->push_back(why);
    if (left_out->size() > named ||
        !read_run_evals(run.dir.string(), fs::exists(files.done), &evals, left_out)) {
      if (left_out->size() > named) ++side.runs_left_out[{run.dataset, run.backbone}];
      continue;
    }
    RunCurve r{run.seed, {}, training_settings(run.dir, /*scored_during_training=*/true)};
    for (size_t i = 0; i < evals.x.size(); ++i) r.curve[int64_t(evals.x[i])] = evals.y[i];
    side.cells[{run.dataset, run.backbone}].push_back(std::move(r));
  }
  return side;
}

// The steps every run of both sides evaluated, in order.
std::vector<int64_t> common_steps(const std::vector<RunCurve>& a, const std::vector<RunCurve>& b) {
  std::vector<int64_t> steps;
  for (const auto& [step, score] : a.front().curve) steps.push_back(step);
  for (const auto* side : {&a, &b}) {
    for (const RunCurve& r : *side) {
      steps.erase(std::remove_if(steps.begin(), steps.end(),
                                 [&](int64_t s) { return r.curve.count(s) == 0; }),
                  steps.end());
    }
  }
  return steps;
}

SideScores scores_over(const std::vector<RunCurve>& runs, int64_t from, int64_t to) {
  SideScores side;
  for (const RunCurve& r : runs) {
    double sum = 0;
    int n = 0;
    for (auto it = r.curve.lower_bound(from); it != r.curve.end() && it->first <= to; ++it) {
      sum += it->second;
      ++n;
    }
    side.seeds.push_back(r.seed);
    side.scores.push_back(sum / n);
  }
  const MeanStd m = mean_std(side.scores);
  side.mean = m.mean;
  side.std = m.std;
  return side;
}

// The unbiased variance of a sample (NaN below two values).
double sample_variance(const std::vector<double>& v) {
  const double n = static_cast<double>(v.size());
  const MeanStd m = mean_std(v);
  return v.size() > 1 ? m.std * m.std * n / (n - 1) : NAN;
}

// A − B seed by seed, over the seeds both sides hold.
void compare_paired(CellComparison& c) {
  std::vector<double> differences;
  for (size_t i = 0; i < c.a.seeds.size(); ++i) {
    const auto at = std::find(c.b.seeds.begin(), c.b.seeds.end(), c.a.seeds[i]);
    if (at != c.b.seeds.end())
      differences.push_back(c.a.scores[i] - c.b.scores[at - c.b.seeds.begin()]);
  }
  c.paired_seeds = static_cast<int>(differences.size());
  c.paired_difference = differences.empty() ? NAN : mean_std(differences).mean;
  c.paired_standard_error = std::sqrt(sample_variance(differences) / differences.size());
}

// The verdict's test (eval/compare.h): paired where both sides hold the same seeds, two or more,
// Welch's otherwise; var_a and var_b are the squared standard errors of the sides' means.
void judge(CellComparison& c, double var_a, double var_b) {
  c.paired_test = c.paired_seeds >= 2 && size_t(c.paired_seeds) == c.a.scores.size() &&
                  size_t(c.paired_seeds) == c.b.scores.size();
  const double difference = c.paired_test ? c.paired_difference : c.difference;
  const double error = c.paired_test ? c.paired_standard_error : c.standard_error;
  c.degrees_of_freedom = c.paired_test ? c.paired_seeds - 1.0
                                       : (var_a + var_b) * (var_a + var_b) /
                                             (var_a * var_a / (c.a.scores.size() - 1.0) +
                                              var_b * var_b / (c.b.scores.size() - 1.0));
  if (!std::isfinite(error)) {
    c.degrees_of_freedom = c.p_value = NAN;
  } else if (error == 0) {  // every pair (or every seed) alike: any difference at all moved
    c.p_value = difference == 0 ? 1 : 0;
  } else {
    c.p_value = two_sided_t_p_value(difference / error, c.degrees_of_freedom);
  }
  c.within_noise = c.p_value >= 0.05;
}

// The settings keys whose values on side A are not those on side B, "key a / b" (a side's seeds
// that differ among themselves show their values joined by ", ").
std::string sides_apart(const std::vector<RunCurve>& a, const std::vector<RunCurve>& b) {
  auto values_of = [](const std::vector<RunCurve>& side, const std::string& key) {
    std::set<std::string> values;
    for (const RunCurve& r : side)
      if (const std::optional<std::string> v = compared_setting(r.settings, key)) values.insert(*v);
    std::string text;
    for (const std::string& v : values) text += (text.empty() ? "" : ", ") + v;
    return text;
  };
  std::set<std::string> keys;
  for (const auto* side : {&a, &b})
    for (const RunCurve& r : *side)
      for (const auto& kv : r.settings) keys.insert(kv.first);
  std::string apart;
  for (const std::string& key : keys) {
    const std::string in_a = values_of(a, key), in_b = values_of(b, key);
    // A side none of whose runs has the key known (config.yaml gone) says so once, in its own key.
    if (in_a.empty() || in_b.empty()) continue;
    if (in_a != in_b) apart += (apart.empty() ? "" : "; ") + key + " " + in_a + " / " + in_b;
  }
  return apart;
}

CellComparison compare_cell(const std::string& dataset, const std::string& backbone,
                            const std::vector<RunCurve>& a, const std::vector<RunCurve>& b) {
  CellComparison c;
  c.dataset = dataset;
  c.backbone = backbone;
  c.settings_apart = sides_apart(a, b);
  const std::vector<int64_t> steps = common_steps(a, b);
  c.difference = c.standard_error = c.paired_difference = c.paired_standard_error = NAN;
  c.degrees_of_freedom = c.p_value = NAN;
  c.a.mean = c.a.std = c.b.mean = c.b.std = NAN;
  if (steps.empty()) return c;            // evaluations == 0: nothing to compare at
  const size_t first = steps.size() / 2;  // the later half, the last step always in
  c.from_step = steps[first];
  c.to_step = steps.back();
  c.evaluations = static_cast<int>(steps.size() - first);
  c.a = scores_over(a, c.from_step, c.to_step);
  c.b = scores_over(b, c.from_step, c.to_step);
  c.difference = c.a.mean - c.b.mean;
  const double var_a = sample_variance(c.a.scores) / c.a.scores.size(),
               var_b = sample_variance(c.b.scores) / c.b.scores.size();
  c.standard_error = std::sqrt(var_a + var_b);
  compare_paired(c);
  judge(c, var_a, var_b);
  return c;
}

// As the report writes a cell (mean_std_text).
std::string side_cell(const SideScores& s) {
  return mean_std_text(s.mean, s.std, s.scores.size()) + " (n=" + std::to_string(s.scores.size()) +
         ")";
}

}  // namespace

std::string verdict(const CellComparison& c) {
  if (c.evaluations == 0) return "no step evaluated by every run";
  if (std::isnan(c.p_value)) return "too few seeds to say";
  return c.within_noise ? "within seed noise" : verdict_moved;
}

std::string test_text(const CellComparison& c) {
  if (c.evaluations == 0 || std::isnan(c.p_value)) return "";
  char text[64];
  if (c.p_value < 0.001) {
    std::snprintf(text, sizeof text, "p < 0.001");
  } else {
    std::snprintf(text, sizeof text, "p = %.2g", c.p_value);
  }
  char degrees[32];
  std::snprintf(degrees, sizeof degrees, c.paired_test ? "%.0f" : "%.1f", c.degrees_of_freedom);
  // Both sides' spreads 0: no degrees to speak of, the p-value is by definition.
  const std::string df =
      std::isfinite(c.degrees_of_freedom) ? std::string(", ") + degrees + " df" : "";
  return std::string(c.paired_test ? "paired t" : "Welch t") + df + ": " + text;
}

std::vector<CellComparison> compare_sweeps(const std::string& sweep_a, const std::string& sweep_b,
                                           std::vector<std::string>* left_out,
                                           std::vector<std::string>* one_sided) {
  std::vector<std::string> unread;
  const Side a = read_side(sweep_a, &unread), b = read_side(sweep_b, &unread);
  if (left_out) *left_out = unread;
  std::vector<CellComparison> cells;
  for (const auto& [key, runs] : a.cells) {
    const auto other = b.cells.find(key);
    if (other != b.cells.end())
      cells.push_back(compare_cell(key.first, key.second, runs, other->second));
  }
  // A cell one side lacks is no row: said, not dropped (a walk, 2026-11-30); where the other
  // side's runs of it were all left out, said so (it has runs, none readable).
  for (const auto& [side, other, name, other_name] :
       {std::tuple{&a, &b, "A", "B"}, std::tuple{&b, &a, "B", "A"}}) {
    for (const auto& [key, runs] : side->cells) {
      if (!one_sided || other->cells.count(key) != 0) continue;
      const auto unreadable = other->runs_left_out.find(key);
      one_sided->push_back(key.first + " / " + key.second + ": only in " + name + " (" +
                           std::to_string(runs.size()) + " run(s) with evaluations" +
                           (unreadable == other->runs_left_out.end()
                                ? ")"
                                : "; " + std::string(other_name) + "'s " +
                                      std::to_string(unreadable->second) +
                                      " run(s) of it left out)"));
    }
  }
  if (cells.empty()) {
    std::string unread_list;  // where the runs left out made it so, they are the reason
    for (const std::string& why : unread) unread_list += "\n  " + why;
    throw std::invalid_argument(
        sweep_a + " and " + sweep_b +
        " share no dataset and backbone with evaluations (evals.csv under "
        "<dataset>/<backbone>/seed<S>/ on both sides)" +
        (unread.empty() ? ""
                        : "; runs left out, unreadable or in another run's folder:" + unread_list));
  }
  return cells;
}

std::string comparison_markdown(const std::vector<CellComparison>& cells, const std::string& a,
                                const std::string& b, const std::vector<std::string>& left_out,
                                const std::vector<std::string>& one_sided) {
  std::string md = "# " + a + " (A) against " + b + " (B)\n\n" +
                   "Each run's score: its mean normalized evaluation during training over the "
                   "later half of the steps every run of the cell evaluated on both sides (the "
                   "window). A and B: mean ± the seeds' population std (as the report's); A − B ± "
                   "the standard error of two independent means (from the seeds' sample std); "
                   "paired: seed by seed, over the seeds both sides hold. The verdict: a two-sided "
                   "t test, paired (n − 1 df) where both sides hold the same seeds, Welch's "
                   "(unequal variances) otherwise; p ≥ 0.05 is within seed noise. Runs whose last "
                   "attempt failed (failed.json) are left out. The last "
                   "column: the training settings A's runs and B's differ in (config keys but "
                   "seed, device and cadences; the data's fingerprint).\n\n"
                   "| dataset | backbone | window (steps) | evaluations a run | A | B | A − B | "
                   "paired A − B | test | verdict | A and B differ in |\n"
                   "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const CellComparison& c : cells) {
    md += "| " + markdown_cell(c.dataset) + " | " + c.backbone + " | ";
    md += c.evaluations == 0
              ? "– | 0 | – | – | – | – | – | "
              : std::to_string(c.from_step) + "–" + std::to_string(c.to_step) + " | " +
                    std::to_string(c.evaluations) + " | " + side_cell(c.a) + " | " +
                    side_cell(c.b) + " | " + score_text(c.difference) + " ± " +
                    score_text(c.standard_error) + " | " + score_text(c.paired_difference) + " ± " +
                    score_text(c.paired_standard_error) + " (n=" + std::to_string(c.paired_seeds) +
                    ") | " + (test_text(c).empty() ? "–" : test_text(c)) + " | ";
    const std::string said = verdict(c);
    md += (c.within_noise || said != verdict_moved ? said : "**" + said + "**") + " | " +
          (c.settings_apart.empty() ? "–" : markdown_cell(c.settings_apart)) + " |\n";
  }
  if (!left_out.empty()) {
    md +=
        "\n## Runs left out\n\nFiles of these runs could not be read (edited by hand, or cut "
        "short by a copy), or say the run is another's than its folder's: each is left out of "
        "its side's scores.\n\n";
    for (const std::string& why : left_out) md += "- " + why + "\n";
  }
  if (!one_sided.empty()) {
    md +=
        "\n## Cells on one side only\n\nNot compared: the other sweep has no readable run of "
        "them with evaluations (none at all, or only runs left out above).\n\n";
    for (const std::string& cell : one_sided) md += "- " + markdown_cell(cell) + "\n";
  }
  return md;
}

std::string comparison_csv(const std::vector<CellComparison>& cells) {
  std::string csv =
      "dataset,backbone,from_step,to_step,evaluations,n_a,mean_a,std_a,n_b,mean_b,std_b,"
      "difference,standard_error,paired_seeds,paired_difference,paired_standard_error,"
      "within_noise,verdict,settings_apart,test,degrees_of_freedom,p_value\n";
  const auto g = io::csv_number;
  auto spread = [&](const SideScores& s) { return s.scores.size() > 1 ? g(s.std) : ""; };
  for (const CellComparison& c : cells) {
    csv += io::csv_line(
        {c.dataset, c.backbone, std::to_string(c.from_step), std::to_string(c.to_step),
         std::to_string(c.evaluations), std::to_string(c.a.scores.size()), g(c.a.mean), spread(c.a),
         std::to_string(c.b.scores.size()), g(c.b.mean), spread(c.b), g(c.difference),
         g(c.standard_error), std::to_string(c.paired_seeds), g(c.paired_difference),
         g(c.paired_standard_error),
         // Empty where the verdict is none: 0 would read as "moved".
         std::isnan(c.p_value) ? "" : (c.within_noise ? "1" : "0"), verdict(c), c.settings_apart,
         std::isnan(c.p_value) ? "" : (c.paired_test ? "paired" : "welch"), g(c.degrees_of_freedom),
         g(c.p_value)});
  }
  return csv;
}

}  // namespace minrnn::eval
