// Episodes of a D4RL-layout dataset as index ranges into its contiguous buffers, with the
// per-step returns-to-go and the state statistics sequence training needs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/d4rl.h"
#include "datasets/minari.h"

namespace minrnn::data {

// Steps [begin, end) of one episode; it ends at a terminal (a fall) or a timeout (the time limit).
struct Episode {
  int64_t begin = 0;
  int64_t end = 0;
  double episode_return = 0.0;  // undiscounted sum of rewards
  bool ended_by_terminal = false;
  int64_t length() const { return end - begin; }
};

struct EpisodeStats {
  int64_t num_episodes = 0;
  int64_t num_terminals = 0;  // over the whole file
  int64_t num_timeouts = 0;   // over the whole file
  int64_t both_flags = 0;  // steps with terminals and timeouts both set (D4RL sets one): terminal
  int64_t dropped_tail_steps = 0;  // steps after the last terminal|timeout (an unfinished episode)
  int64_t min_length = 0, max_length = 0;
  double mean_length = 0.0;
  double min_return = 0.0, mean_return = 0.0, max_return = 0.0, std_return = 0.0;
};

struct EpisodeIndex {
  std::vector<Episode> episodes;
  std::vector<float> returns_to_go;  // (N) undiscounted, within the episode; 0 on dropped steps
  // Per-dimension mean and std of observations over the steps of complete episodes; std has 1e-6
  // added (as Decision Transformer does) so dividing by it is always safe.
  std::vector<float> state_mean;
  std::vector<float> state_std;
  EpisodeStats stats;
};

// Splits on terminals | timeouts and drops an unfinished tail. Throws std::invalid_argument when no
// episode is complete (`what` names the source in the message).
EpisodeIndex split_episodes(const Transitions& data, const std::string& what);

// A dataset ready for training: the data, its episodes and where it came from.
struct Dataset {
  Transitions data;
  EpisodeIndex index;
  std::string source;       // the file read
  std::string fingerprint;  // of what training reads (Transitions::fingerprint)
  std::string env;          // "hopper", ... or "" when unknown
  // Where `env` comes from: "the file's name", "the Minari dataset's id", "the env asked for", or
  // its widths alone ("its widths (obs 11, act 3)", env_from_widths: a guess, not the data's word).
  std::string env_source;
  bool env_from_widths = false;
  // Where `env` is "" because the env a D4RL file's name says has other widths: the refusal
  // ("FILE: 'observations'/'actions' have dims 11/3 but walker2d (the file's name) has 17/6"),
  // which stands unless the file's metadata/env_spec or a config's env names the env
  // (rl::resolve_dataset_env). "" otherwise.
  std::string name_env_conflict;
  std::string format;  // "d4rl" or "minari"
  // Reference returns for normalized scores: the env table's, or a Minari dataset's own;
  // ref_source says which ("metadata.json ref_min_score/ref_max_score", "D4RL table (hopper)").
  // The table's are those of `env`, the env the file's name or widths suggest (ref_from_table):
  // a run in another env (config key env) takes that env's.
  double ref_min_return = 0.0, ref_max_return = 0.0;
  bool has_ref_returns = false, ref_from_table = false;
  std::string ref_source;
  // Minari: what metadata.json says (empty for D4RL files), and the environment the dataset
  // names for evaluation as a Gymnasium EnvSpec JSON document: eval_env_spec when present, else
  // env_spec ("" when it names none); env_spec_field is which of the two. A D4RL-layout file
  // `minrnn collect` wrote names its env in "metadata/env_spec".
  MinariInfo minari;
  std::string env_spec, env_spec_field;
  bool synthetic = false;  // a D4RL-layout file `minrnn data synth` wrote (read_d4rl_made_here)
  // Episodes longer than the env's time limit (0 when the env is unknown): a boundary the file
  // does not mark, e.g. two collections concatenated where the first ended mid-episode.
  int64_t episodes_over_time_limit = 0;
  int max_episode_steps = 0;  // the env's time limit; 0 when the env is unknown
};

// The minrnn command that made the data, "" for data of others (D4RL's, Minari's): `minrnn
// collect` (a D4RL-layout file naming its env in metadata/env_spec, which D4RL's own files do not
// carry; a Minari dataset whose description says so) or `minrnn data synth` (random data).
inline std::string made_by_minrnn(const Dataset& ds) {
  if (ds.format == "d4rl" && ds.synthetic) return "minrnn data synth";
  if ((ds.format == "d4rl" && !ds.env_spec.empty()) ||
      (ds.format == "minari" && ds.minari.collected_by_minrnn))
    return "minrnn collect";
  return "";
}

// Loads a D4RL id ("hopper-medium-v2"), a D4RL-layout .hdf5 path, a Minari dataset directory or a
// Minari id, validates it and splits it into episodes.
Dataset load_dataset(const std::string& id_or_path, const ReadOptions& options = {});

}  // namespace minrnn::data
