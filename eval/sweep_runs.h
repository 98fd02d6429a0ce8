// The run directories of a sweep as `minrnn sweep` lays them out,
// SWEEP_DIR/<dataset>/<backbone>/seed<S>/: what `minrnn report` and `minrnn compare` read.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace minrnn::eval {

struct RunDir {
  std::string dataset, backbone;
  int64_t seed = 0;
  std::filesystem::path dir;
};

// Every one, in (dataset, backbone, seed) order (plots/ and other folders are no run); throws
// std::invalid_argument where `sweep_dir` is not a directory.
std::vector<RunDir> list_run_dirs(const std::string& sweep_dir);

}  // namespace minrnn::eval
