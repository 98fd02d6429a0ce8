// `minrnn report SWEEP_DIR`: Table 3 (table3.md, table3.csv) and learning-curve SVGs (plots/) from
// a sweep's runs. See eval/report.h for the conventions.
#include <cstdio>

#include "eval/report.h"
#include "tools/commands.h"

namespace minrnn::cli {

void add_report_command(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("report", "Table 3 + learning curves from a sweep directory");
  sub->add_option("sweep_dir", *dir, "the sweep's output directory")->required();
  sub->callback([dir] {
    const auto files = eval::write_report(*dir);
    std::printf("%s", files.markdown.c_str());
    for (const auto& f : files.written) std::printf("wrote %s\n", f.c_str());
    for (const auto& f : files.removed)
      std::printf("removed %s (an earlier report's: none of its curves is plotted now)\n",
                  f.c_str());
    if (files.unreadable_curves > 0) {
      std::fprintf(stderr,
                   "note: %d curve file%s could not be read: left out of the plots, listed under "
                   "\"Unreadable curves\"\n",
                   files.unreadable_curves, files.unreadable_curves == 1 ? "" : "s");
    }
  });
}

}  // namespace minrnn::cli
