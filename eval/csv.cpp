#include "eval/csv.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/text.h"
#include "rl/run_dir.h"
#include "rl/run_files.h"

namespace minrnn::eval {

namespace {

// Cell `col` of a row as a number, or an error naming the file, its line and the column: a hand
// edit that left "abc" or "3.0x" there is not the score 0 or 3.
double number_cell(const std::vector<std::string>& cells, int col,
                   const std::filesystem::path& path, size_t line) {
  const std::optional<double> x = io::number_in(cells[col]);
  if (!x) {
    throw std::runtime_error(path.string() + ":" + std::to_string(line + 1) + ": column " +
                             std::to_string(col + 1) + ": expected a number, got '" + cells[col] +
                             "'");
  }
  return *x;
}

}  // namespace

bool read_csv_columns(const std::filesystem::path& path, bool header, const std::string& x_name,
                      const std::string& y_name, int x_col, int y_col, Series* s) {
  // Whole lines only, as rl/run_dir.cpp reads them: a torn last line is skipped even when it has
  // enough commas (a number cut short would pass for a value).
  const std::vector<std::string> lines = io::read_complete_lines(path.string());
  size_t next = 0;
  if (lines.empty()) return false;
  // A first line that is a row: a file from before it had a header, read by `x_col` / `y_col`.
  const bool first_is_row = rl::row_step(lines[0]) >= 0;
  if (header && first_is_row && (x_col < 0 || y_col < 0)) {
    throw std::runtime_error(path.string() + ":1: a row where the header naming " + x_name +
                             " and " + y_name + " would be");
  }
  if (header && !first_is_row) {
    x_col = y_col = -1;  // the header's, not the headerless file's
    std::stringstream ss(lines[next++]);
    std::string name;
    for (int i = 0; std::getline(ss, name, ','); ++i) {
      if (name == x_name) x_col = i;
      if (name == y_name) y_col = i;
    }
    // A header without them is no file of this kind (damaged, or another's): said, not skipped.
    for (const auto& [name, col] : {std::pair{x_name, x_col}, std::pair{y_name, y_col}}) {
      if (col < 0) {
        throw std::runtime_error(path.string() + ":1: its header has no '" + name +
                                 "' column (expected a header naming " + x_name + " and " + y_name +
                                 ")");
      }
    }
  }
  for (; next < lines.size(); ++next) {
    if (lines[next].empty() || lines[next] == "\r") continue;  // a blank line an editor left
    std::vector<std::string> cells;
    std::stringstream ss(lines[next]);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    // A whole line short of the columns read: damaged (a hand edit, lines spliced), said rather
    // than skipped (a walk, 2026-11-30: a short row moved compare's window without a word).
    if (int(cells.size()) <= std::max(x_col, y_col)) {
      throw std::runtime_error(path.string() + ":" + std::to_string(next + 1) + ": " +
                               std::to_string(cells.size()) + " column(s), where a row has " +
                               std::to_string(std::max(x_col, y_col) + 1) + " or more");
    }
    s->x.push_back(number_cell(cells, x_col, path, next));
    s->y.push_back(number_cell(cells, y_col, path, next));
  }
  return !s->x.empty();
}

bool read_eval_curve(const std::filesystem::path& run_dir, Series* out) {
  const std::filesystem::path path = rl::RunFiles(run_dir).evals;
  // By its header's names; a file from before the header, by its columns (rl::evals_columns()).
  if (!read_csv_columns(path, true, "step", "mean_normalized", 0, 3, out)) return false;
  // An evaluation is a mean of episode returns, finite or never written (the rollout refuses
  // non-finite actions): a NaN here was put there by hand.
  for (size_t i = 0; i < out->y.size(); ++i) {
    if (!std::isfinite(out->y[i])) {
      throw std::runtime_error(path.string() + ": the evaluation at step " +
                               std::to_string(static_cast<int64_t>(out->x[i])) + " is " +
                               std::to_string(out->y[i]) + ", not a score");
    }
  }
  return true;
}

int CsvTable::column(const std::string& name) const {
  const auto at = std::find(columns.begin(), columns.end(), name);
  return at == columns.end() ? -1 : static_cast<int>(at - columns.begin());
}

// Row i is the file's line i + 2 (after the header) where no quoted cell holds a newline.
std::string CsvTable::where(size_t row, const std::string& name) const {
  return path + ":" + std::to_string(row + 2) + ": column '" + name + "'";
}

const std::string& CsvTable::text(size_t row, const std::string& name) const {
  const int at = column(name);
  if (at < 0) throw std::runtime_error(path + ": no column '" + name + "'");
  return rows[row][at];
}

std::string CsvTable::text_or(size_t row, const std::string& name,
                              const std::string& otherwise) const {
  const int at = column(name);
  return at < 0 ? otherwise : rows[row][at];
}

double CsvTable::number(size_t row, const std::string& name, bool positive) const {
  return parse(row, name, text(row, name), positive);
}

double CsvTable::number_or(size_t row, const std::string& name, const std::string& otherwise,
                           bool positive) const {
  return parse(row, name, text_or(row, name, otherwise), positive);
}

int64_t CsvTable::count(size_t row, const std::string& name) const {
  const double value = number(row, name, true);
  if (value != std::floor(value) || value > 2147483647.0) {
    throw std::runtime_error(where(row, name) + " holds '" + text(row, name) +
                             "', expected a whole number from 1");
  }
  return static_cast<int64_t>(value);
}

double CsvTable::parse(size_t row, const std::string& name, const std::string& cell,
                       bool positive) const {
  const std::optional<double> value = io::number_in(cell);
  if (!value || !std::isfinite(*value) || (positive && *value <= 0)) {
    throw std::runtime_error(where(row, name) + " holds '" + cell + "', expected a " +
                             (positive ? "positive " : "") + "number");
  }
  return *value;
}

CsvTable read_csv_table(const std::filesystem::path& path) {
  if (path.empty()) throw std::invalid_argument("'': expected a CSV file's path");
  const std::string s = io::read_input_file(path.string(), "CSV file");
  const auto fail = [&](int line, const std::string& what) {
    throw std::runtime_error(path.string() + ":" + std::to_string(line) + ": " + what);
  };
  CsvTable table;
  table.path = path.string();
  std::vector<std::string> record(1);
  bool quoted = false;
  int line = 1, record_line = 1;
  const auto end_record = [&] {
    if (table.columns.empty()) {
      table.columns = record;
    } else if (record.size() != table.columns.size()) {
      fail(record_line, std::to_string(record.size()) + " cells where the header names " +
                            std::to_string(table.columns.size()));
    } else {
      table.rows.push_back(record);
    }
    record.assign(1, "");
    record_line = line;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\n') ++line;
    if (quoted) {
      if (c != '"') {
        record.back() += c;
      } else if (i + 1 < s.size() && s[i + 1] == '"') {
        record.back() += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.emplace_back();
    } else if (c == '\n') {
      end_record();
    } else if (c != '\r') {
      record.back() += c;
    }
  }
  if (quoted) fail(record_line, "a quote opened here is never closed");
  if (record.size() > 1 || !record[0].empty()) end_record();  // a last line without its newline
  if (table.columns.empty()) fail(1, "empty: no header line naming the columns");
  return table;
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    const std::string& cell = cells[i];
    line += i ? "," : "";
    if (cell.find_first_of(",\"\n") == std::string::npos) {
      line += cell;
      continue;
    }
    line += '"';
    for (char c : cell) line += c == '"' ? std::string("\"\"") : std::string(1, c);
    line += '"';
  }
  return line + "\n";
}

std::string markdown_cell(const std::string& text) {
  std::string cell;
  for (char c : text) cell += c == '|' ? std::string("\\|") : std::string(1, c);
  return cell;
}

std::string csv_number(double x) {
  if (!std::isfinite(x)) return "";
  std::ostringstream text;  // a stream's default format, at its default precision 6, is "%.6g"
  text << x;
  return text.str();
}

}  // namespace minrnn::eval
