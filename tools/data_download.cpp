// `minrnn data download ID...`: D4RL v2 MuJoCo and Minari datasets, fetched into the folders the
// readers look in, each file checked (size + sha256) before it gets its name (fetch/).
#include "tools/data_download.h"

#include <cstdio>
#include <memory>

#include "datasets/catalog.h"
#include "fetch/dataset_download.h"
#include "io/atomic_file.h"
#include "rl/stop_request.h"
#include "tools/commands.h"

namespace minrnn::cli {
namespace {

const char* kHelpFooter =
    "IDs: D4RL v2 MuJoCo, {hopper,halfcheetah,walker2d}-{random,medium,expert,medium-replay,\n"
    "medium-expert,full-replay}-v2, into $D4RL_DATASET_DIR or ~/.d4rl/datasets; Minari,\n"
    "namespace/name-vN (e.g. mujoco/hopper/medium-v0, with the datasets its metadata combines),\n"
    "into $MINARI_DATASETS_PATH or ~/.minari/datasets.\n"
    "Mirrors: MINRNN_D4RL_URL replaces http://rail.eecs.berkeley.edu/datasets/offline_rl/\n"
    "gym_mujoco_v2 (the folder the D4RL files are in); HF_ENDPOINT replaces "
    "https://huggingface.co.\n"
    "Every file is checked before it gets its name: its size and sha256 (D4RL: the published\n"
    "table; Minari: the hub's listing, git blob ids for its small files). Bytes go to FILE.part\n"
    "first; a cut connection or Ctrl-C (exit 75) keeps it and the same command resumes there.\n"
    "A file already present is not fetched again: its size is checked, its sha256 once\n"
    "(recorded in FILE.sha256).";

fetch::DatasetDownloadOptions cli_options() {
  fetch::DatasetDownloadOptions options;
  options.file.progress.out = stderr;
  options.file.progress.style = fetch::progress_style_for(stderr);
  options.file.http.should_stop = [] { return rl::stop_requested(); };
  return options;
}

// One line per dataset: what was fetched, what was already there, where it is.
void print_report(const fetch::DatasetDownloadReport& report) {
  const int fetched = report.fetched();
  const int present = int(report.files.size()) - fetched;
  if (fetched == 0) {
    bool hashed = false;
    for (const auto& f : report.files) hashed |= f.result.hashed_present;
    std::printf("%s: already present at %s (size checked, sha256 %s; nothing downloaded)\n",
                report.id.c_str(), report.where.c_str(),
                hashed ? "checked now" : "as recorded at its first check");
    return;
  }
  double seconds = 0;
  for (const auto& f : report.files) seconds += f.result.seconds;
  const int64_t bytes = report.bytes_received();
  std::printf(
      "%s: downloaded %d file(s), %s in %.1f s (%s/s)%s, sizes and checksums checked -> %s\n",
      report.id.c_str(), fetched, fetch::human_bytes(bytes).c_str(), seconds,
      fetch::human_bytes(seconds > 0 ? int64_t(double(bytes) / seconds) : 0).c_str(),
      present > 0 ? (", " + std::to_string(present) + " already present").c_str() : "",
      report.where.c_str());
  for (const auto& id : report.combined) std::printf("  with %s (combined into it)\n", id.c_str());
}

// `what` says what was kept ("stopped; X.part keeps N of M bytes"), never how to resume: that is
// said here, once.
[[noreturn]] void stopped(const std::string& command, const std::string& what) {
  throw ExitError{rl::kExitInterrupted, command + ": stopped by " + rl::stop_signal_name() +
                                            " while downloading: " + what +
                                            ". Run the same command to resume."};
}

}  // namespace

void add_data_download_command(CLI::App& data_cmd) {
  auto ids = std::make_shared<std::vector<std::string>>();
  auto* sub = data_cmd.add_subcommand(
      "download", "Fetch D4RL v2 MuJoCo / Minari datasets (resumable, every file checked)");
  sub->add_option("ids", *ids, "dataset ids: hopper-medium-v2, mujoco/hopper/medium-v0, ...")
      ->required();
  sub->footer(kHelpFooter);
  sub->callback([ids] {
    for (const auto& id : *ids) data::check_downloadable_id(id);  // all refused before any fetch
    rl::install_stop_handlers();
    const fetch::DatasetDownloadOptions options = cli_options();
    std::vector<std::string> failed;
    for (const auto& id : *ids) {
      try {
        print_report(fetch::download_dataset(id, options));
      } catch (const fetch::StopRequested& e) {
        stopped("minrnn data download", id + ": " + e.what());
      } catch (const std::exception& e) {  // FetchError, io::WriteError, a served listing or
        if (ids->size() == 1) throw;       // metadata refused: name it, go on with the others
        std::fprintf(stderr, "minrnn: error: %s: %s\n", id.c_str(), e.what());
        failed.push_back(id);
      }
    }
    if (!failed.empty()) {
      std::string list;
      for (const auto& id : failed) list += " " + id;
      throw ExitError{1, "minrnn data download: " + std::to_string(failed.size()) + " of " +
                             std::to_string(ids->size()) + " failed:" + list};
    }
  });
}

void download_missing_datasets(const std::vector<std::string>& datasets,
                               const std::string& command) {
  rl::install_stop_handlers();
  const fetch::DatasetDownloadOptions options = cli_options();
  for (const auto& dataset : datasets) {
    if (data::locate_dataset(dataset).present) continue;
    try {
      fetch::download_if_missing(dataset, options);
    } catch (const fetch::StopRequested& e) {
      stopped(command, dataset + ": " + e.what());
    }
    std::printf("%s: %s downloaded\n", command.c_str(), dataset.c_str());
  }
}

}  // namespace minrnn::cli
