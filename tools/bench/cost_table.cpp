#include "tools/bench/cost_table.h"

#include <algorithm>
#include <cstdio>

namespace minrnn::cli {

std::string ranked_rows(std::vector<CostRow> rows, int64_t repetitions, int top,
                        const std::string& what, const char* cost_format) {
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.cost > y.cost; });
  double total = 0;
  for (const CostRow& r : rows) total += r.cost;
  const double n = static_cast<double>(std::max<int64_t>(1, repetitions));
  const std::string cell = std::string("| %.0f | ") + cost_format + " | %.1f%% |\n";
  auto line = [&](const std::string& name, const CostRow& r) {
    char buf[256];
    std::snprintf(buf, sizeof buf, cell.c_str(), r.count / n, r.cost / n,
                  100.0 * r.cost / std::max(total, 1e-12));
    return "| " + name + " " + buf;
  };
  std::string md;
  CostRow rest;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (static_cast<int>(i) < top) {
      md += line("`" + rows[i].name + "`", rows[i]);
    } else {
      rest.count += rows[i].count;
      rest.cost += rows[i].cost;
    }
  }
  const size_t others = rows.size() - std::min(rows.size(), static_cast<size_t>(std::max(top, 0)));
  if (others > 0) md += line(std::to_string(others) + " other " + what, rest);
  return md;
}

}  // namespace minrnn::cli
