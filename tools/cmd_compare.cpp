// `minrnn compare SWEEP_A SWEEP_B [--csv FILE]`: whether two sweeps of the same runs score alike,
// per dataset and backbone, from their evaluations during training. See eval/compare.h.
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "eval/compare.h"
#include "io/atomic_file.h"
#include "io/writable.h"
#include "tools/commands.h"

namespace minrnn::cli {

namespace {

// Before the sweeps are read: --csv names a file this command may write, and replaces only an
// earlier comparison's CSV (a slip of the name replaced a run's eval.json). One made by an older
// minrnn, with fewer columns at the end, is one too: its header begins as today's does.
void check_csv_out(const std::string& csv) {
  if (csv.empty()) throw usage_error("compare", "--csv: expected a file name, got ''");
  std::string why = io::why_unwritable(csv, /*make_folders=*/false);
  if (why.empty()) {
    why = io::why_not_of_kind(csv, "a comparison's CSV", [](const std::string& first) {
      return first.rfind("dataset,backbone,from_step,to_step,", 0) == 0;
    });
  }
  if (!why.empty()) throw usage_error("compare", "--csv " + csv + ": " + why);
}

}  // namespace

void add_compare_command(CLI::App& app) {
  struct Args {
    std::string a, b, csv;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "compare", "whether two sweeps score alike (e.g. tf32 against fp32), per dataset × backbone");
  sub->add_option("sweep_a", args->a, "a sweep's output directory (or its snapshot)")->required();
  sub->add_option("sweep_b", args->b, "the sweep to compare it with")->required();
  auto* csv = sub->add_option("--csv", args->csv,
                              "also write the comparison as CSV to this file (a new one, or an "
                              "earlier comparison's)");
  sub->callback([args, csv] {
    if (csv->count() > 0) check_csv_out(args->csv);
    std::vector<std::string> left_out, one_sided;
    const auto cells = eval::compare_sweeps(args->a, args->b, &left_out, &one_sided);
    std::printf("%s",
                eval::comparison_markdown(cells, args->a, args->b, left_out, one_sided).c_str());
    std::error_code ec;  // a slip of the shell (`compare runs/a runs/a`): no comparison at all
    if (std::filesystem::equivalent(args->a, args->b, ec)) {
      std::fprintf(stderr,
                   "note: %s and %s are one directory: every cell is compared with itself\n",
                   args->a.c_str(), args->b.c_str());
    }
    if (!left_out.empty()) {  // the CSV has no place for them
      std::fprintf(
          stderr,
          "note: %zu run(s) left out, unreadable or in another run's folder (see the list)\n",
          left_out.size());
    }
    if (csv->count() > 0) {
      io::write_file_atomically(args->csv, eval::comparison_csv(cells));
      std::printf("wrote %s\n", args->csv.c_str());
    }
  });
}

}  // namespace minrnn::cli
