#include "tools/bench/report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include "io/atomic_file.h"
#include "io/csv.h"
#include "io/text.h"
#include "io/writable.h"
#include "ops/device.h"
#include "sweep/spawn.h"
#include "tools/commands.h"

namespace minrnn::cli {

std::string machine_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, cpu = "unknown CPU";
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) cpu = line.substr(line.find_first_not_of(" \t", colon + 1));
      break;
    }
  }
  return cpu;
}

std::string gpu_name() {
  static const std::string name = [] {
    // A wedged driver can hang nvidia-smi: a bench names its GPU "unknown" rather than hang.
    const sweep::CommandOutput r = sweep::run_command(
        {"nvidia-smi", "--query-gpu=name", "--format=csv,noheader"}, std::chrono::seconds(20));
    std::string out = r.exit_code == 0 ? r.out : "";
    const auto newline = out.find('\n');  // first GPU only
    if (newline != std::string::npos) out = out.substr(0, newline);
    while (!out.empty() && (out.back() == '\r' || out.back() == ' ')) out.pop_back();
    return out.empty() ? std::string("unknown GPU") : out;
  }();
  return name;
}

std::string hardware_name(const torch::Device& device) {
  return device.is_cuda() ? gpu_name() : machine_name();
}

std::string timestamp() {
  return io::local_time_text("%Y-%m-%d %H:%M");
}

std::string entry_heading(const std::string& hardware) {
  return "### " + timestamp() + " — " + hardware + "\n\nCommand: `" + command_line_as_typed() + "`";
}

double median(std::vector<double> values) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void append_benchmark(const std::string& path, const std::string& section,
                      const std::string& entry) {
  io::update_file_atomically(path, [&](const std::string* current) {
    std::string text = current != nullptr ? *current : "# minrnn benchmarks\n";
    if (!text.empty() && text.back() != '\n') text += '\n';
    const auto at_section = text.find(section + "\n");
    if (at_section == std::string::npos) return text + "\n" + section + "\n\n" + entry;
    const auto next = text.find("\n## ", at_section + 1);
    const size_t at = next == std::string::npos ? text.size() : next + 1;
    return text.insert(at, entry + (next == std::string::npos ? "" : "\n"));
  });
}

BenchCsv::BenchCsv(std::vector<std::string> columns, int torch_threads)
    : columns_(std::move(columns)) {
  const auto machine = std::find(columns_.begin(), columns_.end(), "machine");
  if (torch_threads <= 0 || machine == columns_.end()) return;
  threads_at_ = static_cast<size_t>(machine - columns_.begin()) + 1;
  threads_ = std::to_string(torch_threads);
  columns_.insert(columns_.begin() + static_cast<std::ptrdiff_t>(threads_at_), "torch_threads");
}

void BenchCsv::add_row(std::vector<std::string> cells) {
  if (threads_at_ > 0) {
    cells.insert(cells.begin() + static_cast<std::ptrdiff_t>(threads_at_), threads_);
  }
  if (cells.size() != columns_.size()) {
    throw std::logic_error("bench CSV row has " + std::to_string(cells.size()) +
                           " cells, header has " + std::to_string(columns_.size()));
  }
  rows_ += io::csv_line(cells);
}

std::string BenchCsv::text() const {
  return io::csv_line(columns_) + rows_;
}

namespace {

// Before anything is measured: a result would be lost where its files cannot be written (a
// --record from a folder without docs/, after minutes of GPU time). `header` is the first line of
// the bench's CSV.
void check_filing(const std::string& command, const BenchFiling& filing, const CLI::Option* csv,
                  const std::string& default_csv, const std::string& header) {
  if (csv->count() > 0 && filing.csv.empty())
    throw usage_error(command, "--csv: expected a file name, got ''");
  if (!filing.print_only || !filing.csv.empty()) {
    const bool named = !filing.csv.empty();
    const std::string path = named ? filing.csv : default_csv;
    // The default's folder is the tool's own (runs/bench/), made where missing; one the user names
    // must be there, as eval's --out: a typo would make a tree (at / too).
    if (const std::string why = io::why_unwritable(path, /*make_folders=*/!named); !why.empty())
      throw usage_error(command, "--csv " + path + ": cannot write it: " + why);
    // One the user names replaces only this bench's CSV: another bench's (`bench policy --csv
    // runs/bench/eval.csv` lost the rows sweep --estimate reads), a run's evals.csv or a user's
    // table is kept.
    const std::string other =
        named ? io::why_not_of_kind(
                    path, command + "'s CSV as this minrnn writes it (move an older one away)",
                    [&header](const std::string& first) { return first == header; })
              : "";
    if (!other.empty()) throw usage_error(command, "--csv " + path + ": " + other);
  }
  if (!filing.record) return;
  if (filing.markdown.empty())
    throw usage_error(command, "--markdown: expected a file name, got ''");
  std::string why = io::why_unwritable(filing.markdown, /*make_folders=*/false);
  // A log is Markdown that starts with its heading, as docs/benchmarks.md; text inserted into
  // a config.yaml or a checkpoint would break the run it belongs to.
  if (why.empty() && std::filesystem::path(filing.markdown).extension() != ".md")
    why = "a benchmark log is a Markdown file (.md)";
  if (why.empty()) {
    why = io::why_not_of_kind(filing.markdown, "a Markdown log (a first line '# ...')",
                              [](const std::string& first) { return first.rfind("# ", 0) == 0; });
  }
  if (!why.empty()) {
    throw usage_error(command, "--markdown " + filing.markdown + ": cannot append to it: " + why +
                                   " (--record appends to docs/benchmarks.md from the repository "
                                   "root; --markdown names another log)");
  }
}

}  // namespace

void add_filing_options(CLI::App* sub, BenchFiling& filing, const std::string& default_csv,
                        std::function<BenchCsv()> no_rows) {
  auto* record = sub->add_flag(
      "--record", filing.record,
      "Also append the entry to the benchmark log (--markdown, default " + filing.markdown + ")");
  auto* markdown = sub->add_option("--markdown", filing.markdown,
                                   "Benchmark log to append to (implies --record)")
                       ->each([&filing](const std::string&) { filing.record = true; });
  auto* csv =
      sub->add_option("--csv", filing.csv,
                      "CSV of the results (default " + default_csv + "; none with --no-append)");
  sub->add_flag("--no-append", filing.print_only,
                "Print only: no benchmark log, no CSV unless --csv names one")
      ->excludes(record)
      ->excludes(markdown);
  // Runs once the command line is read, before the bench's own callback measures anything.
  sub->parse_complete_callback([sub, &filing, csv, default_csv, no_rows] {
    std::string header = no_rows().text();
    header.pop_back();  // its newline: why_not_of_kind hands the first line without it
    check_filing("bench " + sub->get_name(), filing, csv, default_csv, header);
  });
}

std::string with_environment(const std::string& entry) {
  std::string set;
  for (const char* name : kBehaviourVariables) {
    const char* value = std::getenv(name);
    if (value == nullptr) continue;
    set += std::string(set.empty() ? "" : ", ") + "`" + name + "=" + value + "`";
  }
  const size_t heading_end = entry.find("\n\n");
  if (set.empty() || entry.rfind("###", 0) != 0 || heading_end == std::string::npos) return entry;
  return entry.substr(0, heading_end + 2) + "Set in the environment: " + set + ".\n\n" +
         entry.substr(heading_end + 2);
}

void file_result(const BenchFiling& filing, const std::string& section, const std::string& measured,
                 const BenchCsv& csv, const std::string& default_csv) {
  const std::string entry = with_environment(measured);
  std::printf("%s", entry.c_str());
  // The log first: where it fails, the CSV of the last result is still the last result's.
  if (filing.record) append_benchmark(filing.markdown, section, entry + "\n");
  if (!filing.print_only || !filing.csv.empty()) {
    const std::string path = filing.csv.empty() ? default_csv : filing.csv;
    // Only the default's folder is made (check_filing: one the user names is there).
    const auto parent = std::filesystem::path(path).parent_path();
    if (filing.csv.empty() && !parent.empty()) std::filesystem::create_directories(parent);
    io::write_file_atomically(path, csv.text());
    std::printf("\nCSV: %s\n", path.c_str());
  }
  if (filing.record) std::printf("appended to %s\n", filing.markdown.c_str());
}

torch::Device bench_device(const std::string& device, const std::string& option) {
  const core::DeviceChoice choice = core::resolve_device(device, option);
  core::say_choice(device, choice);
  return choice.device;
}

}  // namespace minrnn::cli
