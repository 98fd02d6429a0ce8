#include "eval/csv.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "io/atomic_file.h"

namespace minrnn::eval {

bool read_csv_columns(const std::filesystem::path& path, bool header, const std::string& x_name,
                      const std::string& y_name, int x_col, int y_col, Series* s) {
  // Whole lines only, as rl/run_dir.cpp reads them: a torn last line is skipped even when it has
  // enough commas (a number cut short would pass for a value).
  const std::vector<std::string> lines = io::read_complete_lines(path.string());
  size_t next = 0;
  if (header) {
    if (lines.empty()) return false;
    std::stringstream ss(lines[next++]);
    std::string name;
    for (int i = 0; std::getline(ss, name, ','); ++i) {
      if (name == x_name) x_col = i;
      if (name == y_name) y_col = i;
    }
    if (x_col < 0 || y_col < 0) return false;
  }
  for (; next < lines.size(); ++next) {
    std::vector<double> cols;
    std::stringstream ss(lines[next]);
    std::string cell;
    while (std::getline(ss, cell, ',')) cols.push_back(std::strtod(cell.c_str(), nullptr));
    if (int(cols.size()) <= std::max(x_col, y_col)) continue;  // a short row
    s->x.push_back(cols[x_col]);
    s->y.push_back(cols[y_col]);
  }
  return !s->x.empty();
}

bool read_eval_curve(const std::filesystem::path& run_dir, Series* out) {
  return read_csv_columns(run_dir / "evals.csv", false, "", "", 0, 3, out);
}

}  // namespace minrnn::eval
