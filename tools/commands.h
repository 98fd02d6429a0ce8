// The `minrnn` subcommands, each in its own tools/cmd_<name>.cpp (main.cpp adds them), and what
// they share: option checks, the command line as typed.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace minrnn::cli {

void add_train_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_data_command(CLI::App& app);
void add_collect_command(CLI::App& app);
void add_bench_command(CLI::App& app);

// `->check(positive())` on a real-valued option: rejects 0, negatives, inf, nan and non-numbers
// with "--seconds: expected a finite number > 0, got '0'". (CLI11 2.1's PositiveNumber spells out
// the whole of DBL_MAX in its message.)
CLI::Validator positive();
// `->check(positive_count())` on an integer option (a count, a size): "expected an integer from 1
// to 2147483647, got '1.5'", where positive() called 1.5 fine and the conversion then failed.
CLI::Validator positive_count();

// `->check(finite_float())`: a number a float holds (what the model's tensors take), not nan,
// inf or 1e308.
CLI::Validator finite_float();

// `->check(whole_number(lo, hi))` on an integer option: rejects anything but a whole number from
// lo to hi with "--seed: expected an integer >= 0, got '-1'" (CLI11 would take a number past the
// type's range for a conversion error, and a negative one where the code reads -1 as "none").
CLI::Validator whole_number(int64_t lo, int64_t hi = std::numeric_limits<int64_t>::max());
// The largest seed of an environment's episodes (eval's, collect's, synth's --seed): 2^62, so a
// seed plus an episode index stays in range; a larger one was clamped.
constexpr int64_t kMaxEnvSeed = int64_t{1} << 62;
// `->check(device_name())` on a device option (each of a list's): auto, cpu, cuda or cuda:N, a
// usage error otherwise (core::why_no_device_name); whether CUDA is usable is asked when it runs.
CLI::Validator device_name();
// `->check(env_family())`: hopper, halfcheetah or walker2d, no version (datasets/env_table.h).
CLI::Validator env_family();
// `->check(env_to_check())`: an environment find_env knows (hopper-v4 too), or "none".
CLI::Validator env_to_check();
// `->check(env_name())` (each of a list's): any name envs::resolve_env takes (hopper, hopper-v5, a
// D4RL id, an env_spec JSON), a usage error with its "did you mean" otherwise.
CLI::Validator env_name();

// `->check(path_name("a directory"))` on an option naming a path to write: rejects '' (which
// std::filesystem refuses with "Invalid argument []", and a default would silently replace:
// `collect --out ''` wrote the default file). It adds nothing to the help: directories' options
// say `->type_name("DIR")` (CLI11 showed TEXT:DIR, as for its ExistingDirectory, though these
// folders may be new).
CLI::Validator path_name(const std::string& what);

// `->check(backbone_name())` on an option naming backbones: rejects a name rl::DecisionModel
// does not build, offering the one a typo meant.
CLI::Validator backbone_name();

// "unknown command 'minrnn bench trian' (did you mean 'train'?) (known: …)" where argv names a
// subcommand `app` does not have at a level that needs one, or "'minrnn data' needs a command:
// …" where it stops at such a level (CLI11 would say only "A subcommand is required"); ""
// otherwise, options and a subcommand's own arguments left to CLI11.
std::string unknown_subcommand(const CLI::App& app, int argc, const char* const* argv);

// Refuses (std::invalid_argument, naming `option`) `steps` transitions in D4RL's layout
// (observations and the next ones, actions, reward, two flags, infos/qpos, qvel and
// action_log_probs: 4 bytes a number, a byte a flag), held once and again as the file image the
// writer builds, where they need more than this machine's memory: `collect --steps 2147483647`
// would sample for days before it failed, `data synth` failed with a bare std::bad_alloc.
void check_transitions_fit(const std::string& option, int64_t steps, int obs_dim, int act_dim,
                           int nq, int nv);

// Refuses (usage_error) a command line's --set that is no key=value of a known key and a value
// of its type, or that sets a key given before: a config file refuses a key given twice, and the
// later one would win without a word.
// `why_not` says why one is no override (rl::why_not_override; a sweep's fills in its cells).
void check_command_line_sets(const std::string& command, const std::vector<std::string>& sets,
                             const std::function<std::string(const std::string&)>& why_not);

// Every option of a command that also takes positional arguments takes one value each time it is
// given (`--seed 0,1` or `--seed 0 --seed 1`), so `train --seed 0 c.yaml` is not read as seeds 0
// and "c.yaml" (CLI11's list options take every word up to the next option).
void one_value_per_option(CLI::App& app);

// What main prints after "minrnn: error: " for a command line CLI11 refused: "train: config is
// required (minrnn train --help)", with "did you mean" for a misspelt option.
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error);

// The command line this process was started with, each word as a shell reads it back
// ("minrnn bench pack --packs 1,4"): what a benchmark entry says was run. main() keeps it.
void keep_command_line(int argc, const char* const* argv);
const std::string& command_line_as_typed();

// Thrown by a subcommand to leave with a message and a given exit code (main prints it, unless
// it is empty: the command has said all there is).
struct ExitError {
  int code;
  std::string message;
};

// Options that do not go together, or a value refused before anything runs: exit 2 with the
// line a parse error prints, "minrnn: error: eval: MESSAGE (minrnn eval --help)".
ExitError usage_error(const std::string& command, const std::string& message);

}  // namespace minrnn::cli
