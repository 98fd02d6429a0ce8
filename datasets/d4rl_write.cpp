// The D4RL-layout writer: same keys and dtypes as D4RL's files, written to `<path>.tmp` and renamed
// so that a failure never leaves a partial file at `path`.
#include <filesystem>
#include <stdexcept>

#include "datasets/d4rl.h"
#include "datasets/hdf5_util.h"

namespace minrnn::data {

void write_d4rl(const std::string& path, const D4rlData& data, const D4rlWriteOptions& options) {
  namespace fs = std::filesystem;
  data.validate(path);
  std::error_code ec;
  if (fs::exists(path, ec) && !options.overwrite) {
    throw std::runtime_error(path +
                             ": already exists (set overwrite, or --overwrite, to replace it)");
  }
  if (options.gzip_level < 0 || options.gzip_level > 9) {
    throw std::invalid_argument(path + ": gzip_level must be in [0, 9], got " +
                                std::to_string(options.gzip_level));
  }
  h5::silence_errors();
  const std::string tmp = path + ".tmp";
  try {
    h5::Id file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    if (!file.valid()) throw std::runtime_error(tmp + ": cannot create file");
    hid_t f = file.get();
    const int64_t n = data.num_steps();
    const int gz = options.gzip_level;
    h5::write_floats(f, "observations", {n, data.obs_dim}, data.observations.data(), gz);
    if (!data.next_observations.empty()) {
      h5::write_floats(f, "next_observations", {n, data.obs_dim}, data.next_observations.data(),
                       gz);
    }
    h5::write_floats(f, "actions", {n, data.act_dim}, data.actions.data(), gz);
    h5::write_floats(f, "rewards", {n}, data.rewards.data(), gz);
    h5::write_bools(f, "terminals", data.terminals, gz);
    h5::write_bools(f, "timeouts", data.timeouts, gz);
    for (const auto& [name, array] : data.infos) {
      h5::write_floats(f, "infos/" + name, array.shape, array.values.data(), gz);
    }
    for (const auto& [name, value] : data.metadata.strings)
      h5::write_string(f, "metadata/" + name, value);
    for (const auto& [name, value] : data.metadata.ints)
      h5::write_int(f, "metadata/" + name, value);
    for (const auto& [name, array] : data.metadata.arrays) {
      h5::write_floats(f, "metadata/" + name, array.shape, array.values.data(), gz);
    }
    // A failing close (disk full) must not be renamed into place.
    if (H5Fclose(file.release()) < 0) throw std::runtime_error(tmp + ": cannot finish writing");
    fs::rename(tmp, path);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
}

}  // namespace minrnn::data
