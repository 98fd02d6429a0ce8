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
// train` gets every key once. Sets spec.command_sets.
void apply_command_sets(SweepSpec& spec, const std::vector<std::string>& sets);

// The --set options a sweep in `out` was last started with, and its sweep file (as given); nullopt
// where none are recorded. Throws std::invalid_argument naming the file where it is there but
// holds no list of "key=value".
struct RecordedSets {
  std::vector<std::string> sets;
  std::string sweep_file;
};
std::optional<RecordedSets> recorded_command_sets(const std::string& out);

// Writes spec.command_sets into spec.out's record (atomically), as a sweep starts its runs.
void record_command_sets(const SweepSpec& spec);

}  // namespace minrnn::sweep
