// The report's files: table3.md, table3.csv, table3.json and the plots, written all or none, and
// never over a file of that name that is no report's.
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "eval/report.h"
#include "io/atomic_file.h"
#include "io/atomic_files.h"
#include "io/python_json.h"
#include "io/text.h"
#include "io/writable.h"

namespace minrnn::eval {

namespace fs = std::filesystem;

namespace {

// A table3.* that is no report's (a user's own notes under the name) is not the report's to
// replace (walk 47: it was, where eval and compare --csv refuse): "" where each is missing, empty
// or a report's; else the first such file and what it holds.
std::string why_not_reports(const fs::path& dir) {
  for (const auto& [name, kind, start] :
       {std::tuple{"table3.md", "a report's table (a first line '# Table 3 (...')", "# Table 3 ("},
        std::tuple{"table3.csv", "a report's CSV (a first line 'dataset,backbone,mean,...')",
                   "dataset,backbone,mean,"}}) {
    const std::string path = (dir / name).string();
    const std::string why =
        io::why_not_of_kind(path, kind, [start = std::string(start)](const std::string& first) {
          return io::starts_with(first, start);
        });
    if (!why.empty()) return path + ": " + why;
  }
  const std::string json = (dir / "table3.json").string();
  std::error_code ec;
  if (!fs::is_regular_file(json, ec) || fs::file_size(json, ec) == 0) return "";
  const nlohmann::json j = io::read_json_or_null(json);
  if (j.is_object() && j.contains("cells")) return "";
  return json +
         ": it holds something other than a report's JSON (an object with \"cells\"): not "
         "replaced";
}

}  // namespace

ReportFiles write_report(const std::string& sweep_dir) {
  const std::vector<ListedRun> listed = list_report_runs(sweep_dir);
  auto runs = collect_scores(listed);
  auto unfinished = collect_unfinished(listed);
  const auto failed = collect_failed(listed);
  set_aside_shorter_budgets(&runs, &unfinished);
  if (runs.empty() && unfinished.empty() && failed.empty()) {
    throw std::runtime_error(sweep_dir +
                             ": no <dataset>/<backbone>/seed<S>/ run with an eval.json or a "
                             "metrics.csv found (has the sweep started?)");
  }
  std::vector<std::pair<std::string, std::string>> unscored;
  for (const auto& r : unfinished) unscored.emplace_back(r.dataset, r.backbone);
  for (const auto& r : failed)
    if (r.phase != kMisplacedPhase) unscored.emplace_back(r.dataset, r.backbone);
  const Table t = make_table(runs, unscored);
  ReportFiles files;
  const fs::path dir(sweep_dir);
  if (const std::string why = why_not_reports(dir); !why.empty()) {
    throw io::WriteError(why + "; move it away or rename it, and the report writes its own " +
                         "(nothing was written)");
  }
  const SweepCurves curves = read_curves(runs, unfinished);
  fill_last_evaluations(&unfinished, curves);
  files.unreadable_curves = static_cast<int>(curves.unreadable.size());
  files.markdown = "# Table 3 (" + sweep_dir + ")\n\n" +
                   (runs.empty() ? "No run has finished yet.\n" : table_markdown(t));
  for (const std::string& section :
       {published_markdown(t), budget_markdown(check_budgets(runs, curves)),
        progress_markdown(unfinished), failed_markdown(failed),
        unreadable_markdown(curves.unreadable)}) {
    if (!section.empty()) files.markdown += "\n" + section;
  }
  std::error_code ec;
  fs::create_directories(dir / "plots", ec);
  if (ec || !fs::is_directory(dir / "plots")) {
    throw io::WriteError("cannot make " + (dir / "plots").string() + " for the curves: " +
                         (ec ? ec.message() : "a file of that name is in the way") +
                         " (table3.md, table3.csv, table3.json and the plots are unchanged)");
  }
  // The tables and the plots all or none: each is written to its temp before any replaces what
  // the folder held (a disk that fills on the last plot changes nothing); a rename that fails puts
  // back those already replaced.
  std::vector<std::pair<std::string, std::string>> outputs = {
      {(dir / "table3.md").string(), files.markdown},
      {(dir / "table3.csv").string(), table_csv(t)},
      {(dir / "table3.json").string(),
       report_json(t, runs, unfinished, failed, curves.unreadable)}};
  CurvePlots plots = plot_curves(dir, runs, unfinished, failed, curves);
  for (auto& svg : plots.svgs) outputs.push_back(std::move(svg));
  std::vector<std::unique_ptr<io::AtomicFile>> temps;
  std::vector<io::AtomicFile*> commits;
  for (const auto& [path, text] : outputs) {
    temps.push_back(std::make_unique<io::AtomicFile>(path));
    temps.back()->write(text);
    commits.push_back(temps.back().get());
  }
  io::commit_all_or_none(commits);
  for (const auto* temp : commits) files.written.push_back(temp->path());
  for (const std::string& path : plots.stale)
    if (fs::remove(path, ec)) files.removed.push_back(path);
  return files;
}

}  // namespace minrnn::eval
