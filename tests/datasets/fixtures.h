// Shared fixtures for the datasets tests: a temp directory and synthetic D4RL-like data.
#pragma once
#include <hdf5.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "datasets/d4rl.h"
#include "tests/temp_dir.h"

namespace minrnn::data::testing {

using minrnn::testing::TempDir;

// Episodes of the given lengths; the last one is left unfinished when `tail` > 0. Episode i ends by
// a terminal when i is odd, by a timeout otherwise. Rewards are 1 + 0.01 * step, so returns are
// known.
inline Transitions make_data(int obs_dim, int act_dim, const std::vector<int>& lengths,
                             int tail = 0, uint64_t seed = 1) {
  Transitions d;
  d.obs_dim = obs_dim;
  d.act_dim = act_dim;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> obs(obs_dim), next(obs_dim), act(act_dim);
  auto add_steps = [&](int len, bool finish, bool terminal) {
    for (int t = 0; t < len; ++t) {
      for (auto& x : obs) x = normal(rng);
      for (auto& x : next) x = normal(rng);
      for (auto& x : act) x = normal(rng);
      bool last = finish && t == len - 1;
      d.append_step(obs.data(), act.data(), 1.0f + 0.01f * t, next.data(), last && terminal,
                    last && !terminal);
    }
  };
  for (size_t i = 0; i < lengths.size(); ++i) add_steps(lengths[i], true, i % 2 == 1);
  if (tail > 0) add_steps(tail, false, false);
  return d;
}

// Raw HDF5 writing for fixtures the writer refuses to produce (wrong dtype, NaN, ...).
class RawFile {
 public:
  explicit RawFile(const std::string& path)
      : file_(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) {}
  ~RawFile() { H5Fclose(file_); }
  RawFile(const RawFile&) = delete;
  RawFile& operator=(const RawFile&) = delete;
  hid_t id() const { return file_; }

  // A dataset of `dims` whose values are given in `mem_type` and stored as `file_type`.
  void put(const std::string& key, hid_t file_type, hid_t mem_type,
           const std::vector<hsize_t>& dims, const void* values) {
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    hid_t dset = H5Dcreate2(file_, key.c_str(), file_type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
    H5Dclose(dset);
    H5Sclose(space);
    H5Pclose(lcpl);
  }
  void floats(const std::string& key, const std::vector<hsize_t>& dims,
              const std::vector<float>& v) {
    put(key, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, dims, v.data());
  }
  void doubles(const std::string& key, const std::vector<hsize_t>& dims,
               const std::vector<double>& v) {
    put(key, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, dims, v.data());
  }
  // h5py's bool: an enum of int8 {FALSE=0, TRUE=1}.
  void bools(const std::string& key, const std::vector<uint8_t>& v) {
    hid_t type = H5Tenum_create(H5T_NATIVE_INT8);
    int8_t no = 0, yes = 1;
    H5Tenum_insert(type, "FALSE", &no);
    H5Tenum_insert(type, "TRUE", &yes);
    put(key, type, type, {v.size()}, v.data());
    H5Tclose(type);
  }

 private:
  hid_t file_;
};

// A minimal valid D4RL-layout file written raw, with `n` steps (the last a timeout); tests then
// break one key at a time. Skips the keys listed in `skip`.
inline void write_raw_d4rl(const std::string& path, hsize_t n, int obs_dim, int act_dim,
                           const std::vector<std::string>& skip = {}) {
  RawFile f(path);
  auto want = [&](const char* key) {
    for (const auto& s : skip)
      if (s == key) return false;
    return true;
  };
  std::vector<uint8_t> flags(n, 0), timeouts(n, 0);
  if (n > 0) timeouts[n - 1] = 1;
  if (want("observations"))
    f.floats("observations", {n, hsize_t(obs_dim)}, std::vector<float>(n * obs_dim, 0.5f));
  if (want("actions"))
    f.floats("actions", {n, hsize_t(act_dim)}, std::vector<float>(n * act_dim, 0.1f));
  if (want("rewards")) f.floats("rewards", {n}, std::vector<float>(n, 1.0f));
  if (want("terminals")) f.bools("terminals", flags);
  if (want("timeouts")) f.bools("timeouts", timeouts);
}

// Replaces (or adds) one dataset of an existing file: how tests break a valid file one key at a
// time.
inline void put_dataset(const std::string& path, const std::string& key, hid_t file_type,
                        hid_t mem_type, const std::vector<hsize_t>& dims, const void* values) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (H5Lexists(file, key.c_str(), H5P_DEFAULT) > 0) H5Ldelete(file, key.c_str(), H5P_DEFAULT);
  hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  hid_t dset =
      H5Dcreate2(file, key.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
  H5Dclose(dset);
  H5Sclose(space);
  H5Fclose(file);
}

}  // namespace minrnn::data::testing
