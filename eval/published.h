// What was published for the paper's Table 3 (REFERENCE.md §3), so a sweep's report can stand
// beside it. D4RL normalized scores on D4RL's own v2 files, mean over seeds; the minRNN columns
// carry the paper's std over seeds. Conventions differ: the DT paper and the minRNN paper do not
// say which checkpoint they report; CORL's "last" column, like our report, scores the last one.
// The minRNN paper follows Ota's Decision Mamba code, which evaluates every 10 000 steps at five
// target returns, 100 episodes each (docs/agent.md, "Configs"). Its Table 3 prints a DT column of
// its own (taken from the Decision Mamba and Aaren papers), not the DT paper's numbers.
#pragma once
#include <string>
#include <vector>

namespace minrnn::eval {

struct PublishedScores {
  const char* dataset;                              // without "-v2": "hopper-medium"
  double dt_table3;                                 // DT as Feng et al. 2024's Table 3 prints it
  double dt_chen;                                   // Decision Transformer (Chen et al. 2021)
  double corl_dt_last;                              // CORL's DT, last checkpoint
  double minlstm, minlstm_std, mingru, mingru_std;  // Feng et al. 2024, Table 3
  double decision_mamba;                            // as Feng et al. 2024's Table 3 prints it
};

// The mean of each column over the nine datasets, as the paper's Average row (dataset "average";
// no std): minLSTM 78.1, minGRU 78.2, DT 76.4, DMamba 78.8.
PublishedScores published_average();

// The paper's Table 3 datasets, in its row order ("halfcheetah-medium", "hopper-medium", ...).
std::vector<std::string> published_datasets();

// The row for `dataset` ("hopper-medium" or "hopper-medium-v2"); nullptr when the paper's Table 3
// has no such dataset.
const PublishedScores* find_published(const std::string& dataset);

}  // namespace minrnn::eval
