// Minari-layout datasets for the reader's tests, written with the HDF5 C API.
#pragma once
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "datasets/minari.h"
#include "tests/datasets/fixtures.h"

namespace minrnn::data::testing {

// A Minari-layout dataset of hopper-sized episodes written with the HDF5 C API: observations
// float64 (T+1 rows), actions float32, rewards float64, terminations/truncations h5py bool.
// Observation column 0 of episode e, row t holds 100 * e + t.
// The groups are episode_{e} unless `groups` names them.
inline void write_minari(const std::filesystem::path& dir, const std::vector<int>& lengths,
                         const std::vector<bool>& terminated, int obs_dim = 11, int act_dim = 3,
                         const std::vector<std::string>& groups = {}) {
  std::filesystem::create_directories(dir / "data");
  RawFile f((dir / "data" / "main_data.hdf5").string());
  for (size_t e = 0; e < lengths.size(); ++e) {
    const hsize_t T = lengths[e];
    const std::string g = (groups.empty() ? "episode_" + std::to_string(e) : groups[e]) + "/";
    std::vector<double> obs((T + 1) * obs_dim, 0.25);
    for (hsize_t t = 0; t <= T; ++t) obs[t * obs_dim] = 100.0 * e + t;
    f.doubles(g + "observations", {T + 1, hsize_t(obs_dim)}, obs);
    f.floats(g + "actions", {T, hsize_t(act_dim)}, std::vector<float>(T * act_dim, 0.5f));
    f.doubles(g + "rewards", {T}, std::vector<double>(T, 2.0));
    std::vector<uint8_t> term(T, 0), trunc(T, 0);
    (terminated[e] ? term : trunc)[T - 1] = 1;
    f.bools(g + "terminations", term);
    f.bools(g + "truncations", trunc);
  }
  // Where Minari keeps it: beside main_data.hdf5.
  std::ofstream(dir / "data" / "metadata.json")
      << R"({"dataset_id": "mujoco/hopper/test-v0", "total_episodes": )" << lengths.size()
      << R"(, "env_spec": "{\"id\": \"Hopper-v5\", \"max_episode_steps\": 1000}",)"
      << R"( "ref_min_score": -20.0, "ref_max_score": 3000.0})";
}

// Replaces <dir>/data/metadata.json.
inline void write_metadata(const std::filesystem::path& dir, const std::string& json) {
  std::ofstream(dir / "data" / "metadata.json") << json;
}

template <typename E = std::invalid_argument>
inline std::string read_error(const std::filesystem::path& dir) {
  try {
    read_minari(dir.string());
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace minrnn::data::testing
