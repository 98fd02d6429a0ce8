// `minrnn report SWEEP_DIR`: the paper's Table 3 from a sweep's runs, plus learning curves.
//
// Runs are found as SWEEP_DIR/<dataset>/<backbone>/seed<S>/eval.json (the layout `minrnn sweep`
// writes). Convention: each run's score is the D4RL normalized return of its LAST checkpoint,
// averaged over the eval episodes; a cell is mean ± std over seeds (population std, ddof 0).
// The Average row is the mean of a column's per-dataset means.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace minrnn::eval {

struct RunScore {
  std::string dataset, backbone, run_dir;
  int64_t seed = 0;
  double normalized = 0;  // mean over episodes
};

struct Cell {
  double mean = 0, std = 0;
  int n = 0;  // seeds
};

struct Table {
  std::vector<std::string> datasets, backbones;               // rows, columns (paper order first)
  std::map<std::pair<std::string, std::string>, Cell> cells;  // (dataset, backbone)
  std::map<std::string, Cell> average;  // per backbone: mean over its datasets (n = datasets)
};

// Every run with an eval.json under `sweep_dir`; throws naming a malformed file.
std::vector<RunScore> collect_scores(const std::string& sweep_dir);
Table make_table(const std::vector<RunScore>& runs);
std::string table_markdown(const Table& table);
std::string table_csv(const Table& table);
// Our cells beside the published ones (eval/published.h) for every row the paper's Table 3 has;
// empty when it has none of the table's datasets.
std::string published_markdown(const Table& table);

struct ReportFiles {
  std::vector<std::string> written;
  std::string markdown;  // what table3.md holds
};
// Writes table3.md (our table, then the published comparison), table3.csv and
// plots/<dataset>-<backbone>-{loss,score}.svg into sweep_dir.
ReportFiles write_report(const std::string& sweep_dir);

}  // namespace minrnn::eval
