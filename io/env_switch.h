// A behaviour switch read from the environment (MINRNN_STACKED_PACK, MINRNN_SIDE_WORK,
// MINRNN_READ_IN_PROCESS …): one of two named values, or a default where it is unset or empty;
// anything else is refused naming the variable, its value and what it takes.
#pragma once
#include <string>

namespace minrnn::io {

// The value of environment variable `name`, or `fallback` where it is unset or empty (a path's
// override: D4RL_DATASET_DIR, MINARI_DATASETS_PATH, XDG_CACHE_HOME …).
std::string env_or(const char* name, const std::string& fallback);

// Whether `name` is set to `on` (not to `off`), `otherwise` where unset or empty; `meaning` says
// what each value does in the refusal of another (std::invalid_argument "NAME=value: expected …").
bool env_switch(const char* name, bool otherwise, const char* off, const char* on,
                const char* meaning);

}  // namespace minrnn::io
