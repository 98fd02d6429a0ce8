#include "io/csv.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/text.h"

namespace minrnn::io {

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

std::vector<std::string> csv_cells(const std::string& line) {
  const size_t end = !line.empty() && line.back() == '\r' ? line.size() - 1 : line.size();
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < end; ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < end && line[i + 1] == '"') {
      cells.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
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
  const std::optional<double> value = number_in(cell);
  if (!value || !std::isfinite(*value) || (positive && *value <= 0)) {
    throw std::runtime_error(where(row, name) + " holds '" + cell + "', expected a " +
                             (positive ? "positive " : "") + "number");
  }
  return *value;
}

CsvTable read_csv_table(const std::filesystem::path& path) {
  if (path.empty()) throw std::invalid_argument("'': expected a CSV file's path");
  const std::string s = read_input_file(path.string(), "CSV file");
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

int CsvRows::column(const std::string& name) const {
  const auto at = std::find(columns.begin(), columns.end(), name);
  return at == columns.end() ? -1 : static_cast<int>(at - columns.begin());
}

std::optional<double> CsvRows::number_at(const Row& row, int col) const {
  if (col < 0 || static_cast<size_t>(col) >= row.cells.size()) return std::nullopt;
  return number_in(row.cells[col]);
}

double CsvRows::number(const Row& row, int col) const {
  const std::string at = path + ":" + std::to_string(row.line) + ": ";
  // A whole line short of the column: damaged (a hand edit, lines spliced), said rather than
  // skipped (a walk, 2026-11-30: a short row moved compare's window without a word).
  if (col < 0 || static_cast<size_t>(col) >= row.cells.size()) {
    throw std::runtime_error(at + std::to_string(row.cells.size()) +
                             " column(s), where a row has " + std::to_string(col + 1) + " or more");
  }
  const std::optional<double> x = number_at(row, col);
  if (!x) {
    throw std::runtime_error(at + "column " + std::to_string(col + 1) +
                             ": expected a number, got '" + row.cells[col] + "'");
  }
  return *x;
}

CsvRows read_csv_rows(const std::filesystem::path& path,
                      const std::vector<std::string>& columns_without_header) {
  CsvRows out;
  out.path = path.string();
  out.columns = columns_without_header;
  const std::vector<std::string> lines = read_complete_lines(path.string());
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty() || lines[i] == "\r") continue;
    std::vector<std::string> cells = csv_cells(lines[i]);
    if (i == 0 && !number_in(cells[0])) {
      out.columns = std::move(cells);
      out.header = true;
    } else {
      out.rows.push_back({i + 1, std::move(cells)});
    }
  }
  return out;
}

bool read_csv_columns(const std::filesystem::path& path, const std::string& x_name,
                      const std::string& y_name,
                      const std::vector<std::string>& columns_without_header,
                      std::vector<double>* x, std::vector<double>* y) {
  const CsvRows csv = read_csv_rows(path, columns_without_header);
  if (!csv.header && csv.rows.empty()) return false;  // missing, or empty
  if (!csv.header && columns_without_header.empty()) {
    throw std::runtime_error(path.string() + ":1: a row where the header naming " + x_name +
                             " and " + y_name + " would be");
  }
  const int x_col = csv.column(x_name), y_col = csv.column(y_name);
  // A header without them is no file of this kind (damaged, or another's): said, not skipped.
  for (const auto& [name, col] : {std::pair{x_name, x_col}, std::pair{y_name, y_col}}) {
    if (col < 0) {
      throw std::runtime_error(path.string() + ":1: its header has no '" + name +
                               "' column (expected a header naming " + x_name + " and " + y_name +
                               ")");
    }
  }
  if (csv.rows.empty()) return false;
  // The widest of the two first: a short line is named by the columns it must reach.
  const int wider = std::max(x_col, y_col);
  for (const CsvRows::Row& row : csv.rows) {
    if (static_cast<int>(row.cells.size()) <= wider) csv.number(row, wider);
    x->push_back(csv.number(row, x_col));
    y->push_back(csv.number(row, y_col));
  }
  return true;
}

std::string csv_number(double x) {
  if (!std::isfinite(x)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

}  // namespace minrnn::io
