// The record of a D4RL recipe's SAC run in its work dir (<work>/run.txt): the env and seed, and the
// options that decide how it trains. A later command may reuse the run's finished phases only if
// it asks for the same training; otherwise e.g. a 5 000-step toy run would silently become the
// medium policy of a full-size collection.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

namespace minrnn::rl {

struct SacRunRecipe {
  std::string env;  // an id, or an env_spec JSON
  uint64_t seed;
  int64_t train_steps, start_steps, eval_every;
  double target;  // the medium policy's normalized score
};

// Writes run.txt in a new work dir; in a used one, refuses (std::invalid_argument) a recipe that
// differs, naming the command's option. Work dirs from before the recipe was recorded hold "ENV
// seed S" and are checked for env and seed only.
void check_work_dir_recipe(const SacRunRecipe& run, const std::filesystem::path& work);

}  // namespace minrnn::rl
