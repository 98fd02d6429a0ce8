// Shared by every `minrnn bench ...`: the machine's name, a timestamp, and filing a result under
// its section of docs/benchmarks.md (atomically, never losing what was there).
#pragma once
#include <torch/torch.h>

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "io/csv.h"

namespace minrnn::cli {

std::string machine_name();  // CPU model
std::string gpu_name();      // from nvidia-smi (asked once); "unknown GPU" when it cannot tell
// What ran a measurement on `device`: the GPU's name on CUDA, the CPU's otherwise.
std::string hardware_name(const torch::Device& device);
std::string timestamp();  // "YYYY-MM-DD HH:MM"
// The first lines of a bench's entry: "### TIME — HARDWARE\n\nCommand: `AS TYPED`", where
// `hardware` names what ran it (and its threads); the bench goes on with what it measured.
std::string entry_heading(const std::string& hardware);
// The middle of `values` (the mean of the middle two where their count is even); NaN where empty.
double median(std::vector<double> values);
// Appends `entry` at the end of the section headed `section` ("## ..."), creating file and section.
void append_benchmark(const std::string& path, const std::string& section,
                      const std::string& entry);

// The machine-readable twin of a bench's markdown entry: a header and one line per measurement.
// A CPU's rates depend on the threads LibTorch ran on: with `torch_threads` > 0 (by default the
// count now, where the measurement ran; a bench that ran on another count passes it) a
// `torch_threads` column follows `machine`, its cell added to every row.
class BenchCsv {
 public:
  explicit BenchCsv(std::vector<std::string> columns, int torch_threads = torch::get_num_threads());
  // Cells holding a comma, quote or newline are quoted. Throws if the count differs from the
  // header's: a misaligned CSV would be read wrongly without any error.
  void add_row(std::vector<std::string> cells);
  std::string text() const;

 private:
  std::vector<std::string> columns_;
  std::string rows_;
  size_t threads_at_ = 0;  // the torch_threads column's index; 0 where there is none
  std::string threads_;
};

// Where a bench files its result. By default it prints and writes its CSV under runs/bench/: a
// command that edited the repository unasked would surprise. --record appends the entry to the
// benchmark log (--markdown FILE, default docs/benchmarks.md; naming a file records too);
// --no-append prints only.
struct BenchFiling {
  std::string markdown = "docs/benchmarks.md";
  std::string csv;  // empty: the bench's default under runs/bench/
  bool record = false;
  bool print_only = false;
};
// `default_csv` is what --help shows as the CSV's default path. `no_rows` makes the bench's CSV
// without a row: a --csv the user names is replaced only where its first line is that header
// (another bench's CSV, or this one's of another version, is kept), asked once the command line
// is read.
void add_filing_options(CLI::App* sub, BenchFiling& filing, const std::string& default_csv,
                        std::function<BenchCsv()> no_rows);
// The environment variables that change what a bench measures (the scan kernel, side work, a
// pack stacked, its products and bias gradients, the CPU GEMM and the tuned GEMM choices' file, the
// CPU ops' static split, LibTorch's GEMM path): an entry names those set, below its heading
// (with_environment), so that a run under one is not read as the default's.
inline constexpr const char* kBehaviourVariables[] = {
    "MINRNN_SCAN_KERNEL",         "MINRNN_SIDE_WORK",          "MINRNN_STACKED_PACK",
    "MINRNN_STACKED_BIAS",        "MINRNN_STACKED_GEMM",       "MINRNN_STACKED_BIAS_GRAD",
    "MINRNN_STACKED_GEMM_SEARCH", "MINRNN_NO_GEMM_CPU",        "MINRNN_TUNED_GEMM_FILE",
    "MINRNN_STATIC_SPLIT",        "TORCH_BLAS_PREFER_CUBLASLT"};
std::string with_environment(const std::string& entry);

// Prints `entry` (with_environment's); writes `csv` (atomically) to --csv, or to `default_csv`
// unless print-only; and, with --record, appends the entry under `section` of the markdown file.
// A print-only run (--no-append) writes a CSV only where asked, so it never replaces the CSV of
// the last result.
void file_result(const BenchFiling& filing, const std::string& section, const std::string& entry,
                 const BenchCsv& csv, const std::string& default_csv);

// Sets `value` to --quick's `quick_value` unless the user gave `option`: `--quick --lengths 16`
// keeps T = 16 and shrinks the rest.
template <typename T>
void quick_default(const CLI::App* sub, const std::string& option, T& value,
                   const typename std::common_type<T>::type& quick_value) {  // T from `value` only
  if (sub->count(option) == 0) value = quick_value;
}

// The device a bench measures on (auto, cpu, cuda[:N]; core::resolve_device: cuda only where
// usable, auto printed). Throws naming the option.
torch::Device bench_device(const std::string& device, const std::string& option = "--device");

}  // namespace minrnn::cli
