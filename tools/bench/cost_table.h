// The ranked rows of the "where the time goes" tables of `bench train --profile`: ATen ops by
// self time (op_profile.h), GPU kernels by device time (kernel_profile.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace minrnn::cli {

// What ran, how often, and how long in all.
struct CostRow {
  std::string name;
  int64_t count = 0;
  double cost = 0;
};
// Markdown rows `| `name` | count | cost | share |`, costliest first: the first `top`, then the
// rest summed into one "N other <what>" row; count and cost divided by `repetitions`, the share of
// all rows' cost. `cost_format`: the printf format of a cost cell ("%.2f").
std::string ranked_rows(std::vector<CostRow> rows, int64_t repetitions, int top,
                        const std::string& what, const char* cost_format);

}  // namespace minrnn::cli
