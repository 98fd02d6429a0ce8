// Shared by the sweep tests: the tiny config sweeps point at, and a sweep file's parse error.
#pragma once
#include <stdexcept>
#include <string>

#include "sweep/sweep.h"

namespace minrnn::testing {

inline const std::string kTinyConfig =
    std::string(MINRNN_SOURCE_DIR) + "/configs/tiny-hopper-mingru.yaml";

// The message parse_sweep refuses `yaml` with ("" when it accepts it), as from "my_sweep.yaml".
inline std::string sweep_error_of(const std::string& yaml) {
  try {
    sweep::parse_sweep(yaml, "my_sweep.yaml");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace minrnn::testing
