// What the report and compare read of a run's CSV files and write as their own: a run's
// evaluation curve (evals.csv, in rl::evals_columns()) and a label as a Markdown cell. The CSV
// format itself, and the bench tables' reader, are io/csv.h's.
#pragma once
#include <filesystem>
#include <string>

#include "eval/svg.h"
#include "io/csv.h"

namespace minrnn::eval {

// A run's evaluations during training, RUN_DIR/evals.csv (by its header's names, or in a file
// from before the header by rl::evals_columns()' places): the normalized mean against the step.
// False where the file is missing or has no row; throws as io::read_csv_columns does, and where a
// score is not finite.
bool read_eval_curve(const std::filesystem::path& run_dir, Series* out);

// A label (a dataset's) as a Markdown table cell: a '|' in it would start another column.
std::string markdown_cell(const std::string& text);

}  // namespace minrnn::eval
