#include "eval/csv.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace minrnn::eval {

bool read_csv_columns(const std::filesystem::path& path, bool header, const std::string& x_name,
                      const std::string& y_name, int x_col, int y_col, Series* s) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  if (header) {
    if (!std::getline(in, line)) return false;
    std::stringstream ss(line);
    std::string name;
    for (int i = 0; std::getline(ss, name, ','); ++i) {
      if (name == x_name) x_col = i;
      if (name == y_name) y_col = i;
    }
    if (x_col < 0 || y_col < 0) return false;
  }
  while (std::getline(in, line)) {
    std::vector<double> cols;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cols.push_back(std::strtod(cell.c_str(), nullptr));
    if (int(cols.size()) <= std::max(x_col, y_col)) continue;  // a torn last line
    s->x.push_back(cols[x_col]);
    s->y.push_back(cols[y_col]);
  }
  return !s->x.empty();
}

}  // namespace minrnn::eval
