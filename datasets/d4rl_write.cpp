// The D4RL-layout writer: same keys and dtypes as D4RL's files, written to `<path>.tmp` and renamed
// so that a failure never leaves a partial file at `path`.
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "datasets/d4rl.h"
#include "datasets/hdf5_util.h"
#include "io/atomic_file.h"

namespace minrnn::data {
namespace {

// D4RL's keys, each with its dtype and shape, into the open file `f`.
void write_keys(hid_t f, const Transitions& data, int gz) {
  const int64_t n = data.num_steps();
  h5::write_floats(f, "observations", {n, data.obs_dim}, data.observations.data(), gz);
  if (!data.next_observations.empty()) {
    h5::write_floats(f, "next_observations", {n, data.obs_dim}, data.next_observations.data(), gz);
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
  for (const auto& [name, value] : data.metadata.ints) h5::write_int(f, "metadata/" + name, value);
  for (const auto& [name, array] : data.metadata.arrays) {
    h5::write_floats(f, "metadata/" + name, array.shape, array.values.data(), gz);
  }
}

}  // namespace

void write_d4rl(const std::string& path, const Transitions& data, const D4rlWriteOptions& options) {
  namespace fs = std::filesystem;
  data.validate(path);
  std::error_code ec;
  if (fs::exists(path, ec) && !options.overwrite) {
    throw std::runtime_error(path + ": already exists (--force replaces it)");
  }
  if (options.gzip_level < 0 || options.gzip_level > 9) {
    throw std::invalid_argument(path + ": gzip_level must be in [0, 9], got " +
                                std::to_string(options.gzip_level));
  }
  h5::silence_errors();
  // HDF5 builds the file in memory (the core driver, no backing store); its bytes then go through
  // io::AtomicFile like every other file minrnn writes: to <path>.tmp, each write checked, renamed
  // over `path` when complete. A full disk or a size limit so leaves the previous file as it was,
  // no temp file, and an error with the OS reason — and never reaches HDF5, whose 1.10 library
  // crashes at exit after a file it could not close.
  std::vector<char> image;
  try {
    double raw_bytes = 0;  // the growth step of the in-memory file: a few steps for any size
    for (const auto* v : {&data.observations, &data.next_observations, &data.actions})
      raw_bytes += 4.0 * static_cast<double>(v->size());
    h5::Id fapl(H5Pcreate(H5P_FILE_ACCESS));
    if (!fapl.valid() ||
        H5Pset_fapl_core(fapl.get(), static_cast<size_t>(raw_bytes / 4) + (1 << 20), 0) < 0)
      throw std::runtime_error(h5::failure_reason());
    h5::Id file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
    if (!file.valid()) throw std::runtime_error(h5::failure_reason());
    hid_t f = file.get();
    write_keys(f, data, options.gzip_level);
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) throw std::runtime_error(h5::failure_reason());
    const ssize_t size = H5Fget_file_image(f, nullptr, 0);
    if (size < 0) throw std::runtime_error(h5::failure_reason());
    image.resize(static_cast<size_t>(size));
    if (H5Fget_file_image(f, image.data(), image.size()) != size)
      throw std::runtime_error(h5::failure_reason());
    if (H5Fclose(file.release()) < 0) throw std::runtime_error(h5::failure_reason());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": cannot build the HDF5 file: " + e.what());
  }
  io::write_file_atomically(path, {image.data(), image.size()});
}

}  // namespace minrnn::data
