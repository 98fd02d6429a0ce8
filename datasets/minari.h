// Minari datasets (D4RL's maintained successor): `<root>/<id>/data/main_data.hdf5` with one group
// episode_{i} per episode (observations T+1 rows; actions, rewards, terminations, truncations T
// rows) and `<root>/<id>/metadata.json`. Read into the same contiguous D4rlData as a D4RL file.
#pragma once
#include <cstdint>
#include <string>

#include "datasets/d4rl.h"

namespace minrnn::data {

struct MinariInfo {
  std::string dataset_id;  // metadata.json "dataset_id" (or the folder name)
  std::string env_id;      // env_spec "id", e.g. "Hopper-v5"; "" when absent
  int64_t total_episodes = 0;
  int64_t total_steps = 0;
  bool has_ref_scores = false;  // metadata.json ref_min_score / ref_max_score
  double ref_min_score = 0.0, ref_max_score = 0.0;
  // Episodes whose last step had neither termination nor truncation set; we mark them timeouts.
  int64_t episodes_without_end_flag = 0;
};

// The dataset directory for a Minari id ("mujoco/hopper/medium-v0") under $MINARI_DATASETS_PATH or
// ~/.minari/datasets, or for a path to the directory or to its data/main_data.hdf5. Throws, saying
// where the files belong, when absent. Never downloads.
std::string resolve_minari_dir(const std::string& id_or_path);

// True when `id_or_path` names a Minari dataset rather than a D4RL file or id: a directory, a file
// called main_data.hdf5, or a slash-separated id that is not an existing file.
bool is_minari_reference(const std::string& id_or_path);

// Reads a Minari dataset directory. next_observations are observations[1:] of each episode;
// terminals/timeouts are terminations/truncations. Options as for read_d4rl (infos are not read:
// Minari's per-episode infos have no fixed layout). Errors name the file and the key.
D4rlData read_minari(const std::string& dataset_dir, MinariInfo* info = nullptr,
                     const D4rlReadOptions& options = {});

}  // namespace minrnn::data
