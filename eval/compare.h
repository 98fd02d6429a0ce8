// `minrnn compare SWEEP_A SWEEP_B`: whether two sweeps of the same runs score alike — the same
// sweep with matmul_precision tf32 and fp32 (issue 41 allows TF32 only where the scores do not
// move), or before and after a change — from the evaluations during training (evals.csv), so two
// sweeps stopped part-way compare at the steps both reached.
//
// Per (dataset, backbone) with runs on both sides: the window is the second half of the steps
// that every one of those runs evaluated (a run without evaluations is left out); a run's score is
// its mean normalized evaluation over the window. Per side: the mean and standard deviation over
// seeds. The difference A − B has the standard error of two independent means (sample variances);
// where both sides hold a seed, so does the paired difference, seed by seed. The verdict is a
// two-sided t test at 5 %: paired (n − 1 degrees of freedom) where both sides hold the same seeds,
// at least two — a seed's runs share data order and initialization, so its two scores move
// together and the pairs' spread, not the seeds', is the noise — and Welch's unequal-variance test
// (Welch–Satterthwaite degrees of freedom) where they do not. p ≥ 0.05 is "within seed noise": no
// evidence that the scores moved, at the power five seeds give.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace minrnn::eval {

struct SideScores {
  std::vector<int64_t> seeds;
  std::vector<double> scores;  // per seed, in `seeds` order
  double mean = 0, std = 0;    // population std (ddof 0), as Table 3 reports seeds
};

struct CellComparison {
  std::string dataset, backbone;
  int64_t from_step = 0, to_step = 0;  // the window, both ends included
  int evaluations = 0;                 // per run in the window
  SideScores a, b;
  double difference = 0, standard_error = 0;  // A − B; NaN with fewer than two seeds a side
  int paired_seeds = 0;                       // seeds on both sides
  double paired_difference = 0, paired_standard_error = 0;  // NaN below two paired seeds
  // The test the verdict rests on (above): paired, or Welch's; its degrees of freedom and p-value
  // (NaN where there is no test).
  bool paired_test = false;
  double degrees_of_freedom = 0, p_value = 0;
  bool within_noise = false;  // p ≥ 0.05
  // The training settings A's runs and B's differ in (training_settings in eval/report.h: config
  // keys, eval_episodes and target_return included, but seed, device and cadences; and the
  // data's fingerprint), "key a / b; ..." ("" when none): the change under test (matmul_precision
  // tf32 / fp32), or data it was not meant to be.
  std::string settings_apart;
};

// What a comparison concludes: "no step evaluated by every run", "too few seeds to say",
// "within seed noise" or "moved (p < 0.05)".
std::string verdict(const CellComparison& c);

// The test the verdict rests on, for the table: "paired t, 4 df: p = 0.083", "Welch t, 2.9 df:
// p = 0.25"; "" where there is none.
std::string test_text(const CellComparison& c);

// Every (dataset, backbone) with evaluated runs in both sweeps, in (dataset, backbone) order; a run
// whose last attempt failed (failed.json) is left out, as the report leaves it, and so is one whose
// evals.csv cannot be read (as the report's read_run_evals reads it: a NaN evaluation, a copy cut
// short), why in `left_out` naming the file; a cell with runs on one side only is named in
// `one_sided` ("hopper-medium / minlstm: only in A (3 run(s) with evaluations)", "...; B's 2
// run(s) of it left out)" where B has runs of it, none readable). Throws
// std::invalid_argument naming a directory that is none, or both when they share no cell.
std::vector<CellComparison> compare_sweeps(const std::string& sweep_a, const std::string& sweep_b,
                                           std::vector<std::string>* left_out = nullptr,
                                           std::vector<std::string>* one_sided = nullptr);

// A markdown table with the conventions above it (and the runs left out and the cells on one side
// only, if any), and its CSV twin.
std::string comparison_markdown(const std::vector<CellComparison>& cells, const std::string& a,
                                const std::string& b, const std::vector<std::string>& left_out = {},
                                const std::vector<std::string>& one_sided = {});
std::string comparison_csv(const std::vector<CellComparison>& cells);

}  // namespace minrnn::eval
