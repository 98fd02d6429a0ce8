// What was published for the paper's Table 3 (REFERENCE.md §3), so a sweep's report can stand
// beside it. D4RL normalized scores on D4RL's own v2 files, mean over seeds; the minRNN columns
// carry the paper's std over seeds. Conventions differ: the DT paper and the minRNN paper do not
// say which checkpoint they report; CORL's "last" column, like our report, scores the last one.
#pragma once
#include <string>
#include <vector>

namespace minrnn::eval {

struct PublishedScores {
  const char* dataset;                              // without "-v2": "hopper-medium"
  double dt_paper;                                  // Decision Transformer (Chen et al. 2021)
  double corl_dt_last;                              // CORL's DT, last checkpoint
  double minlstm, minlstm_std, mingru, mingru_std;  // Feng et al. 2024, Table 3
  double decision_mamba;
};

// The paper's Table 3 datasets, in its row order ("halfcheetah-medium", "hopper-medium", ...).
std::vector<std::string> published_datasets();

// The row for `dataset` ("hopper-medium" or "hopper-medium-v2"); nullptr when the paper's Table 3
// has no such dataset.
const PublishedScores* find_published(const std::string& dataset);

}  // namespace minrnn::eval
