// CSV as minrnn writes it and reads it back: RFC 4180 lines (a cell holding a comma, quote or
// newline in quotes, a quote in it doubled), a whole file under its header (the benches' tables,
// the report's), and a file another process appends rows to while it is read (a training run's
// metrics.csv and evals.csv: complete lines only). The format alone: which file holds which
// columns is said by its writer (rl/run_dir.h for a run's, sweep/estimate.h for bench pack's).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace minrnn::io {

// One line of such a file: cells joined by commas, quoted where they hold a comma, quote or
// newline; "\n" at the end.
std::string csv_line(const std::vector<std::string>& cells);
// The cells of one line as csv_line writes it, without its newline (a CR before it, a file edited
// on Windows, dropped). A cell whose quotes span lines is read_csv_table's to read.
std::vector<std::string> csv_cells(const std::string& line);
// A number as a cell: "%.6g", empty where it is not finite (not measured, no verdict) so that no
// reader takes "nan" or "inf" for a value. The report's comparison and every bench's CSV.
std::string csv_number(double x);

// A CSV file whose first line names its columns. The cell readers throw std::runtime_error naming
// the file and the column (and the row's line, for a cell that is there): a hand edit that left
// "fast" or "16.7" where a number or a count belongs is not read as 0 or 16.
struct CsvTable {
  std::string path;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // each as wide as `columns`

  int column(const std::string& name) const;  // its index; -1 where there is no such column
  const std::string& text(size_t row, const std::string& name) const;  // a column it must have
  // The optional column `name` where the file has it, else `otherwise` (an older writer's file).
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

// A CSV file another process appends to a line at a time: its complete lines
// (read_complete_lines: a torn last line, the writer killed mid-line, is no row even where it has
// enough commas), blank ones (an editor's) left out. Its first line names the columns unless its
// first cell is a number: then the file, one written before it had a header, holds
// `columns_without_header` in their order.
struct CsvRows {
  struct Row {
    size_t line = 0;  // the file's, from 1
    std::vector<std::string> cells;
  };
  std::string path;
  std::vector<std::string> columns;
  bool header = false;  // whether the file's first line named `columns`
  std::vector<Row> rows;

  int column(const std::string& name) const;  // its index; -1 where there is no such column
  // The row's cell in column `col` as a number; nullopt where the row is shorter or the cell is no
  // number (io::number_in).
  std::optional<double> number_at(const Row& row, int col) const;
  // The same, or std::runtime_error naming the file, line and column: "FILE:LINE: column 4:
  // expected a number, got 'abc'", "FILE:LINE: 2 column(s), where a row has 4 or more".
  double number(const Row& row, int col) const;
};
CsvRows read_csv_rows(const std::filesystem::path& path,
                      const std::vector<std::string>& columns_without_header);

// Columns `x_name` and `y_name` of such a file, row by row. False where the file is missing or has
// no row; throws std::runtime_error naming the file where its header names no such column (or,
// with no `columns_without_header`, a row stands where the header should), and as
// CsvRows::number where a line lacks either column or a cell there is no number ("abc", "",
// "3.0x").
bool read_csv_columns(const std::filesystem::path& path, const std::string& x_name,
                      const std::string& y_name,
                      const std::vector<std::string>& columns_without_header,
                      std::vector<double>* x, std::vector<double>* y);

}  // namespace minrnn::io
