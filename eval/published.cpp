#include "eval/published.h"

namespace minrnn::eval {
namespace {

// REFERENCE.md §3, in the paper's row order; the first column, Table 3's DT, from the paper
// itself (../shared/seeds/minrnn-paper.md).
const PublishedScores kTable3[] = {
    {"halfcheetah-medium", 42.6, 42.6, 42.20, 42.7, 0.7, 43.0, 0.4, 42.8},
    {"hopper-medium", 68.4, 67.6, 65.10, 85.0, 4.4, 79.4, 8.2, 83.5},
    {"walker2d-medium", 75.5, 74.0, 67.63, 72.0, 7.5, 73.3, 3.3, 78.2},
    {"halfcheetah-medium-replay", 37.0, 36.6, 38.91, 38.6, 1.1, 38.5, 1.1, 39.6},
    {"hopper-medium-replay", 85.6, 82.7, 81.77, 88.5, 4.7, 90.5, 0.9, 82.6},
    {"walker2d-medium-replay", 71.2, 66.6, 59.86, 69.7, 10.7, 72.8, 8.9, 70.9},
    {"halfcheetah-medium-expert", 88.8, 86.8, 91.55, 85.4, 1.7, 86.3, 0.5, 91.9},
    {"hopper-medium-expert", 109.6, 107.6, 110.44, 110.3, 1.6, 109.7, 2.7, 111.1},
    {"walker2d-medium-expert", 109.3, 108.1, 107.11, 110.3, 0.5, 110.3, 0.4, 108.3},
};

}  // namespace

PublishedScores published_average() {
  PublishedScores mean{"average", 0, 0, 0, 0, 0, 0, 0, 0};
  double PublishedScores::*const columns[] = {
      &PublishedScores::dt_table3, &PublishedScores::dt_chen, &PublishedScores::corl_dt_last,
      &PublishedScores::minlstm,   &PublishedScores::mingru,  &PublishedScores::decision_mamba};
  const double rows = sizeof kTable3 / sizeof kTable3[0];
  for (const PublishedScores& row : kTable3) {
    for (double PublishedScores::*column : columns) mean.*column += row.*column / rows;
  }
  return mean;  // the stds stay 0: the paper's Average row has none
}

std::vector<std::string> published_datasets() {
  std::vector<std::string> names;
  for (const PublishedScores& row : kTable3) names.push_back(row.dataset);
  return names;
}

const PublishedScores* find_published(const std::string& dataset) {
  const std::string suffix = "-v2";
  std::string name = dataset;
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.resize(name.size() - suffix.size());
  for (const PublishedScores& row : kTable3) {
    if (name == row.dataset) return &row;
  }
  return nullptr;
}

}  // namespace minrnn::eval
