// Reading the small CSV files a run directory holds (metrics.csv, evals.csv) for reports and
// sweep progress.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "eval/svg.h"

namespace minrnn::eval {

// Columns x and y of a CSV file as a series. With `header`, the first line names the columns and
// `x_name` / `y_name` pick them (where it is a row instead, a file from before its header,
// `x_col` / `y_col` index them); otherwise `x_col` / `y_col` index them. A torn last line (a run
// still writing) is skipped. False when the file is missing or no row is complete; throws
// std::runtime_error naming the file, line and column where a picked cell is no number ("abc",
// "", "3.0x"), a whole line lacks a picked column, or a header names no such column.
bool read_csv_columns(const std::filesystem::path& path, bool header, const std::string& x_name,
                      const std::string& y_name, int x_col, int y_col, Series* out);

// A run's evaluations during training, RUN_DIR/evals.csv (rl::evals_columns(): step, mean return,
// std, mean normalized, std, under its header or, from before the header, alone): the normalized
// mean against the step. False
// as read_csv_columns; throws as it does, and where a score is not finite.
bool read_eval_curve(const std::filesystem::path& run_dir, Series* out);

// A CSV file whose first line names its columns, as the benches write them (tools/bench/report.h:
// a cell holding a comma, quote or newline in quotes, a quote in it doubled). The cell readers
// throw std::runtime_error naming the file and the column (and the row's line, for a cell that is
// there): a hand edit that left "fast" or "16.7" where a number or a count belongs is not read as
// 0 or 16.
struct CsvTable {
  std::string path;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // each as wide as `columns`

  int column(const std::string& name) const;  // its index; -1 where there is no such column
  const std::string& text(size_t row, const std::string& name) const;  // a column it must have
  // The optional column `name` where the file has it, else `otherwise` (an older bench's file).
  std::string text_or(size_t row, const std::string& name, const std::string& otherwise) const;
  double number(size_t row, const std::string& name, bool positive = false) const;
  double number_or(size_t row, const std::string& name, const std::string& otherwise,
                   bool positive = false) const;
  // A whole number from 1 to 2^31 − 1 (a pack size, a batch), where a cast would wrap 1e12 and
  // truncate 16.7.
  int64_t count(size_t row, const std::string& name) const;
  // "FILE:LINE: column 'NAME'", where an error about that cell begins.
  std::string where(size_t row, const std::string& name) const;

 private:
  double parse(size_t row, const std::string& name, const std::string& cell, bool positive) const;
};
// Throws naming the file: std::invalid_argument where it is missing or no regular file
// (io::read_input_file), std::runtime_error with the line where it has no header, leaves a quote
// open or has a row of another width than its header.
CsvTable read_csv_table(const std::filesystem::path& path);

// One line of such a file (RFC 4180): cells joined by commas, a cell holding a comma, quote or
// newline in quotes, a quote in it doubled; "\n" at the end.
std::string csv_line(const std::vector<std::string>& cells);

// A label (a dataset's) as a Markdown table cell: a '|' in it would start another column.
std::string markdown_cell(const std::string& text);

// A number as a CSV cell: "%.6g", empty where it is not finite (not measured, no verdict) so
// that no reader takes "nan" or "inf" for a value. The report's comparison and every bench's CSV.
std::string csv_number(double x);

}  // namespace minrnn::eval
