// The mean and population standard deviation of a sample: how D4RL papers report returns over
// episodes and normalized scores over seeds.
#pragma once
#include <cmath>
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

}  // namespace minrnn::eval
