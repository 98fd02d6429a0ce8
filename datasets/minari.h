// Minari datasets (D4RL's maintained successor): `<root>/<id>/data/main_data.hdf5` with one group
// episode_{i} per episode (observations T+1 rows; actions, rewards, terminations, truncations T
// rows) and `<root>/<id>/metadata.json`. Read into the same contiguous Transitions as a D4RL file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/d4rl.h"

namespace minrnn::data {

// A Gymnasium space as Minari serializes it in metadata.json (observation_space, action_space).
struct MinariSpace {
  bool present = false;
  std::string type;   // "Box", "Dict", "Discrete", ...
  std::string dtype;  // "float64", "float32", ...
  std::vector<int64_t> shape;
  std::vector<double> low, high;  // Box bounds (±inf for unbounded), flattened
  std::string text;               // as stored
};

struct MinariInfo {
  std::string dataset_id;     // metadata.json "dataset_id" (or the folder name)
  std::string metadata_path;  // the metadata.json read ("" for data that is no Minari dataset)
  std::string minari_version;
  // The environment: env_spec (the one the data was recorded in) and eval_env_spec (the one to
  // evaluate in, when the dataset names one), each a Gymnasium EnvSpec JSON document as stored,
  // "" when absent; env_id / eval_env_id are their "id" fields ("Hopper-v5").
  std::string env_spec, eval_env_spec;
  std::string env_id, eval_env_id;
  // From the spec to evaluate in (eval_env_spec, else env_spec): its time limit (0 when it has
  // none) and whether its kwargs put x in the observation
  // (exclude_current_positions_from_observation = false: one column more than the table's env).
  int max_episode_steps = 0;
  bool observes_x = false;
  MinariSpace observation_space, action_space;
  int64_t total_episodes = 0;  // what main_data.hdf5 holds
  int64_t total_steps = 0;
  // metadata.json's total_episodes / total_steps (-1 when absent): a reader refuses a file that
  // holds other totals (an episode group lost, a file cut short), as Python's minari fails on it.
  int64_t declared_episodes = -1, declared_steps = -1;
  bool has_ref_scores = false;  // metadata.json ref_min_score / ref_max_score
  double ref_min_score = 0.0, ref_max_score = 0.0;
  // Episodes whose last step had neither termination nor truncation set; we mark them timeouts.
  int64_t episodes_without_end_flag = 0;
  // metadata.json's description begins with kCollectedByMinrnn: `minrnn collect` made the data
  bool collected_by_minrnn = false;
};
// How the description of a Minari dataset `minrnn collect` writes begins: Minari has no key that
// says which program made the data, and a key of our own would be one Python's minari does not
// know.
inline constexpr char kCollectedByMinrnn[] = "minrnn collect ";

// Where Minari keeps datasets: $MINARI_DATASETS_PATH, else ~/.minari/datasets (Minari's own rule).
std::string minari_root();

// The dataset directory for a Minari id ("mujoco/hopper/medium-v0") under $MINARI_DATASETS_PATH or
// ~/.minari/datasets, or for a path to the directory or to its data/main_data.hdf5. Throws, saying
// where the files belong and the `minrnn data download` command that fetches them, when absent.
// Never downloads itself (fetch/ does).
std::string resolve_minari_dir(const std::string& id_or_path);

// True when `id_or_path` names a Minari dataset rather than a D4RL file or id: a directory, a file
// called main_data.hdf5, or a slash-separated id that is not an existing file.
bool is_minari_reference(const std::string& id_or_path);

// Reads a Minari dataset directory: <dir>/data/main_data.hdf5 and <dir>/data/metadata.json (where
// Minari keeps it; <dir>/metadata.json is read when that is absent; neither is refused).
// next_observations are observations[1:] of each episode; terminals/timeouts are
// terminations/truncations. Options as for read_d4rl (infos are not read: Minari's per-episode
// infos have no fixed layout). A space other than a Box (a Dict observation space), or one whose
// shape is not the data's, is an error naming metadata.json's field and value; so is any other
// error, naming the file and the key.
Transitions read_minari(const std::string& dataset_dir, MinariInfo* info = nullptr,
                        const ReadOptions& options = {});

}  // namespace minrnn::data

namespace minrnn::data {

// What a Minari dataset's metadata.json says beside the data (minari 0.5.x layout).
struct MinariWriteOptions {
  std::string dataset_id;     // "minrnn/hopper/medium-v0": (namespace/)name-vN, as Minari parses
  std::string env_spec;       // the Gymnasium EnvSpec JSON of the env the data was recorded in
  std::string eval_env_spec;  // the env to evaluate in; "" writes none (Minari then uses env_spec)
  MinariSpace observation_space, action_space;  // Box spaces; shapes must match the data
  bool has_ref_scores = false;
  double ref_min_score = 0, ref_max_score = 0;
  int num_episodes_average_score = 0;  // how many episodes the reference scores average (0: omit)
  std::string algorithm_name, author, author_email, code_permalink, description;
  bool overwrite = false;  // replace an existing dataset directory
};

struct MinariWriteResult {
  int64_t episodes = 0, steps = 0;
  int64_t dropped_tail_steps = 0;  // an unfinished last episode (no terminal/timeout) is dropped
};

// A Box space as Gymnasium builds it: shape {dim}, bounds low/high (±inf allowed).
MinariSpace box_space(int64_t dim, double low, double high, const std::string& dtype);

// The Minari dataset id checks Minari makes (parse_dataset_id): (namespace/)name-vN, names of
// word characters and '-'. Throws std::invalid_argument naming the id otherwise.
void check_minari_dataset_id(const std::string& dataset_id);
bool is_minari_dataset_id(const std::string& dataset_id);
// Where write_minari may write a dataset: a new path, or with `overwrite` a Minari dataset's
// folder (data/main_data.hdf5 in it) holding nothing but its own files and hidden ones (a name
// from '.': .DS_Store, an editor's swap file, which the new dataset keeps) — never a folder of
// something else, nor one with a user's files beside the dataset's (named: replacing the folder
// would delete them). Throws naming the path.
void check_minari_destination(const std::string& dataset_dir, bool overwrite);

// Writes `data` as the Minari dataset <dataset_dir>/data/{main_data.hdf5, metadata.json}, the
// layout Python's minari.DataCollector writes: one group episode_{i} per episode (observations
// float64 T+1 rows: each step's observation, then the episode's last next_observation; actions
// float32, rewards float64, terminations/truncations h5py bool; attrs id and total_steps; an
// empty infos group). Episodes end at terminals | timeouts; needs next_observations. Written into
// <dataset_dir>.tmp and renamed, so a failure leaves no partial dataset; an existing directory is
// an error unless options.overwrite, and its hidden files are copied into the new one.
MinariWriteResult write_minari(const std::string& dataset_dir, const Transitions& data,
                               const MinariWriteOptions& options);

}  // namespace minrnn::data
