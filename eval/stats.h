// The mean and population standard deviation of a sample: how D4RL papers report returns over
// episodes and normalized scores over seeds; and the t test `minrnn compare` judges by.
#pragma once
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace minrnn::eval {

struct MeanStd {
  double mean = 0, std = 0;
};

// {0, 0} for an empty sample.
inline MeanStd mean_std(const std::vector<double>& v) {
  MeanStd m;
  if (v.empty()) return m;
  double sum = 0, squares = 0;
  for (double x : v) sum += x;
  m.mean = sum / v.size();
  for (double x : v) squares += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(squares / v.size());
  return m;
}

// The two-sided p-value of Student's t statistic `t` with `degrees` of freedom (not an integer
// for Welch's test): P(|T| ≥ |t|). 0 for an infinite t, NaN for a NaN one or degrees ≤ 0.
double two_sided_t_p_value(double t, double degrees);

// A score as the tables and summaries print it: `digits` after the point; "–" where it is not
// finite; "0.0", not "-0.0", where it rounds to zero.
inline std::string score_text(double v, int digits = 1) {
  if (!std::isfinite(v)) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  const std::string text = buf;
  return text[0] == '-' && text.find_first_not_of("-0.") == std::string::npos ? text.substr(1)
                                                                              : text;
}

// "mean ± std" of n values (episodes, seeds). One value has no spread to show, so no "± 0.0"
// suggests one: the mean alone. A spread under 0.1 keeps two significant digits ("± 0.048"),
// where one decimal would print "± 0.0"; under 0.001 it is "± < 0.001".
inline std::string mean_std_text(double mean, double std, size_t n) {
  if (n <= 1) return score_text(mean);
  if (!std::isfinite(std) || std >= 0.1 || std == 0) {
    return score_text(mean) + " ± " + score_text(std);
  }
  if (std < 0.001) return score_text(mean) + " ± < 0.001";  // not "1.2e-05" in a table
  char spread[32];
  std::snprintf(spread, sizeof spread, "%.2g", std);
  return score_text(mean) + " ± " + spread;
}

}  // namespace minrnn::eval
