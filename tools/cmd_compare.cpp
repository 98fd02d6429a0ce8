// `minrnn compare SWEEP_A SWEEP_B [--csv FILE]`: whether two sweeps of the same runs score alike,
// per dataset and backbone, from their evaluations during training. See eval/compare.h.
#include <cstdio>

#include "eval/compare.h"
#include "io/atomic_file.h"
#include "tools/commands.h"

namespace minrnn::cli {

void add_compare_command(CLI::App& app) {
  struct Args {
    std::string a, b, csv;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "compare", "whether two sweeps score alike (e.g. tf32 against fp32), per dataset × backbone");
  sub->add_option("sweep_a", args->a, "a sweep's output directory (or its snapshot)")->required();
  sub->add_option("sweep_b", args->b, "the sweep to compare it with")->required();
  sub->add_option("--csv", args->csv, "also write the comparison as CSV to this file");
  sub->callback([args] {
    const auto cells = eval::compare_sweeps(args->a, args->b);
    std::printf("%s", eval::comparison_markdown(cells, args->a, args->b).c_str());
    if (!args->csv.empty()) {
      io::write_file_atomically(args->csv, eval::comparison_csv(cells));
      std::printf("wrote %s\n", args->csv.c_str());
    }
  });
}

}  // namespace minrnn::cli
