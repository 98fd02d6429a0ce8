// The command line's --set overrides of a sweep, and the record of those it was last started
// with: a sweep started with `--set device=cuda` keeps them for its later commands (--status,
// --estimate, a resume) that give no --set, so they do not find every run "mismatched" (a walk,
// 2026-11-29). A key given again replaces its own (`--set max_steps=N --extend` keeps
// `device=cuda`); deleting the record drops them all.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sweep/sweep.h"

namespace minrnn::sweep {

// Where a sweep's out dir records the --set options it was last started with.
inline constexpr const char* kCommandSetsFile = "sweep_sets.json";

// `base` without the keys `over` gives, then `over`: of two "key=value" of one key the later wins.
std::vector<std::string> with_overrides(std::vector<std::string> base,
                                        const std::vector<std::string>& over);

// `sets` (the command line's) over the file's `set:` (with_overrides), so each run's `minrnn
// train` gets every key once. Sets spec.command_sets and spec.file_sets.
void apply_command_sets(SweepSpec& spec, const std::vector<std::string>& sets);

// The --set options a sweep in `out` was last started with, and its sweep file (as given); nullopt
// where none are recorded. Throws std::invalid_argument naming the file where it is there but
// holds no list of "key=value".
struct RecordedSets {
  std::vector<std::string> sets;
  std::string sweep_file;
  // The file's own `set` then (absent from a record older than it): a kept --set over a key the
  // file has changed since is refused (changed_under_kept_sets).
  std::optional<std::vector<std::string>> file_sets;
};
std::optional<RecordedSets> recorded_command_sets(const std::string& out);

// Writes spec.command_sets and spec.file_sets into spec.out's record (atomically), as a sweep
// starts its runs.
void record_command_sets(const SweepSpec& spec);

// The keys of `kept` (recorded --set options the command line gives again by none of its own)
// whose entry in the file's `set` now differs from the record's file_sets and from the kept option
// itself: each a line "the file's set max_steps=400 (max_steps=300 when started) under --set
// max_steps=200". Empty where the record holds no file_sets.
std::vector<std::string> changed_under_kept_sets(const RecordedSets& recorded,
                                                 const std::vector<std::string>& kept,
                                                 const std::vector<std::string>& file_sets_now);

}  // namespace minrnn::sweep
