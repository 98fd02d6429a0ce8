// Before a sweep starts (both backends), what it checks and makes: its folder, its runs' data and
// devices, the notes on look-alike datasets; and, once it stops, what it left (sweep/sweep.h).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "datasets/catalog.h"
#include "io/writable.h"
#include "ops/device.h"
#include "sweep/sweep.h"

namespace minrnn::sweep {

namespace fs = std::filesystem;

std::string left_unfinished(const LeftUnfinished& left) {
  std::string text;
  const auto add = [&](int count, const char* what) {
    if (count > 0) text += (text.empty() ? "" : ", ") + std::to_string(count) + what;
  };
  add(left.checkpointed, " run(s) stopped after checkpointing");
  add(left.uncheckpointed, " run(s) stopped before a checkpoint (they start again)");
  add(left.unevaluated, " trained and not yet evaluated");
  add(left.not_started, " not started");
  return text.empty() ? "no run left unfinished" : text;
}

void make_sweep_dir(const SweepSpec& spec, const std::string& dir) {
  std::string why = io::why_folder_unwritable(dir, /*make_folders=*/true);
  std::error_code ec;
  if (why.empty() && (fs::create_directories(dir, ec), ec)) why = ec.message();
  if (!why.empty()) {
    throw std::runtime_error(spec.file + ": out " + spec.out + ": cannot make " + dir +
                             " to write the runs in: " + why);
  }
}

std::vector<std::string> missing_datasets(const std::vector<SweepRun>& runs) {
  std::vector<std::string> missing;
  for (const auto& r : runs) {
    if (r.state != RunState::kPending || !r.data_missing) continue;  // evaluation needs no data
    if (std::find(missing.begin(), missing.end(), r.dataset_source) == missing.end())
      missing.push_back(r.dataset_source);
  }
  return missing;
}

std::string data_missing_note(const SweepRun& run) {
  if (run.state != RunState::kPending) return "";
  if (!run.data_unreadable.empty()) return "data unreadable: " + run.data_unreadable;
  if (!run.data_missing) return "";
  return run.data_downloadable ? "data missing: " + data::download_command({run.dataset_source})
                               : "data missing: no file " + run.dataset_where;
}

void note_lookalike_datasets(const std::vector<SweepRun>& runs) {
  std::vector<std::string> noted;
  for (const auto& r : runs) {
    if (std::find(noted.begin(), noted.end(), r.dataset_source) != noted.end()) continue;
    noted.push_back(r.dataset_source);
    if (const std::string note = data::d4rl_lookalike_note(r.dataset_source); !note.empty())
      std::printf("note: %s\n", note.c_str());
  }
}

bool says_contents_damaged(const std::exception& e) {
  // The readers throw invalid_argument for contents no dataset has, and say "corrupt file" or
  // "truncated" where HDF5 could not decode what is there.
  const std::string why = e.what();
  return dynamic_cast<const std::invalid_argument*>(&e) != nullptr ||
         why.find("corrupt file") != std::string::npos ||
         why.find("truncated") != std::string::npos;
}

namespace {

// "\n  <dataset>: <the reader's error>; <what to do>" for each dataset of runs still to train that
// is there and does not load, each once. Moving it away is advised only for a damaged file: an
// error of the system's (EIO, a lock refused) would have a good dataset thrown away (review 52).
std::string unreadable_datasets(const std::vector<SweepRun>& runs, int* count) {
  std::string lines;
  std::vector<std::string> named;
  for (const auto& r : runs) {
    if (r.state != RunState::kPending || r.data_unreadable.empty() ||
        std::find(named.begin(), named.end(), r.dataset_source) != named.end())
      continue;
    named.push_back(r.dataset_source);
    const std::string& why = r.data_unreadable;
    const std::string said =
        why.find(r.dataset_where) != std::string::npos ? why : r.dataset_where + ": " + why;
    lines += "\n  " + (said.rfind(r.dataset_source, 0) == 0 ? "" : r.dataset_source + ": ") + said;
    // The reader's own advice where it gives one (a file cut short: "Move it away and fetch it
    // again ...").
    if (why.find("ove it away") != std::string::npos) continue;
    if (!r.data_damaged) {
      lines += " (not the file's contents: once that is fixed, start the sweep again)";
      continue;
    }
    lines += "; move it away and " +
             (r.data_downloadable ? data::download_command({r.dataset_source}) + " fetches it again"
                                  : std::string("make it again"));
  }
  *count = int(named.size());
  return lines;
}

}  // namespace

void refuse_missing_datasets(const SweepSpec& spec, const std::vector<SweepRun>& runs) {
  int unreadable = 0;
  const std::string damaged = unreadable_datasets(runs, &unreadable);
  if (unreadable > 0) {
    throw std::runtime_error(spec.file + ": " + std::to_string(unreadable) + " dataset" +
                             (unreadable > 1 ? "s" : "") +
                             " of runs still to train unreadable; nothing was started:" + damaged);
  }
  const std::vector<std::string> missing = missing_datasets(runs);
  if (missing.empty()) return;
  std::string lines;
  std::vector<std::string> downloadable;
  for (const std::string& dataset : missing) {
    const auto run = std::find_if(runs.begin(), runs.end(),
                                  [&](const SweepRun& r) { return r.dataset_source == dataset; });
    lines += "\n  " + dataset + ": not at " + run->dataset_where;
    if (run->data_downloadable) {
      downloadable.push_back(dataset);
    } else {
      lines += " (a path, not an id minrnn can download: make that file first)";
    }
  }
  std::string how;
  if (!downloadable.empty()) {
    how = "\ndownload " + std::string(downloadable.size() > 1 ? "them" : "it") +
          " with: " + data::download_command(downloadable) + "  (or run the sweep with --download)";
  }
  throw std::runtime_error(spec.file + ": " + std::to_string(missing.size()) + " dataset" +
                           (missing.size() > 1 ? "s" : "") +
                           " of runs still to train missing; nothing was started:" + lines + how);
}

void refuse_unusable_device(const SweepSpec& spec, const std::vector<SweepRun>& runs) {
  std::map<std::string, int> asking;  // device → runs still to train on it
  for (const SweepRun& r : runs)
    if (r.state == RunState::kPending && r.device != "auto" && r.device != "cpu")
      ++asking[r.device];
  for (const auto& [device, count] : asking) {
    try {
      core::resolve_device(device, "device");
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(spec.file + ": " + std::to_string(count) +
                               " run(s) to train ask for device " + device +
                               "; nothing was started: " + e.what() +
                               " A sweep's runs: --set device=cpu (or auto) here.");
    }
  }
}

}  // namespace minrnn::sweep
