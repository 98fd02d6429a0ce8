// A D4RL recipe's work dir: the record of its SAC run (sac_work_dir.h).
#include "collect/sac_work_dir.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "io/atomic_file.h"

namespace minrnn::rl {
namespace {

namespace fs = std::filesystem;

// The recipe as run.txt's words, each key an option's name.
std::vector<std::pair<std::string, std::string>> recipe_words(const SacRunRecipe& run) {
  char target[32];
  std::snprintf(target, sizeof(target), "%.17g", run.target);
  std::string env = run.env;  // run.txt is whitespace-separated: an env_spec JSON loses its spaces
  env.erase(std::remove_if(env.begin(), env.end(), [](unsigned char c) { return std::isspace(c); }),
            env.end());
  return {{"env", env},
          {"seed", std::to_string(run.seed)},
          {"train_steps", std::to_string(run.train_steps)},
          {"start_steps", std::to_string(run.start_steps)},
          {"eval_every", std::to_string(run.eval_every)},
          {"target", target}};
}

}  // namespace

void check_work_dir_recipe(const SacRunRecipe& run, const fs::path& work) {
  const auto recipe = recipe_words(run);
  const fs::path file = work / "run.txt";
  if (!fs::exists(file)) {
    std::string text;
    for (const auto& [key, value] : recipe) text += key + " " + value + "\n";
    io::write_file_atomically(file.string(), text);
    return;
  }
  std::ifstream in(file);
  const std::vector<std::string> words{std::istream_iterator<std::string>(in), {}};
  std::map<std::string, std::string> recorded;
  if (words.size() == 3 && words[1] == "seed") {
    recorded = {{"env", words[0]}, {"seed", words[2]}};
  } else {
    for (size_t i = 0; i + 1 < words.size(); i += 2) recorded[words[i]] = words[i + 1];
  }
  if (!recorded.count("env") || !recorded.count("seed")) {
    throw std::invalid_argument(file.string() + ": not a minrnn collect run.txt (no env and " +
                                "seed); use another --work-dir");
  }
  for (const auto& [key, value] : recipe) {
    const auto it = recorded.find(key);
    if (it == recorded.end() || it->second == value) continue;  // older dirs: env and seed only
    std::string option = key == "env" ? "ENV" : "--" + key;
    std::replace(option.begin(), option.end(), '_', '-');
    throw std::invalid_argument("--work-dir " + work.string() + " holds the SAC run of " +
                                recorded["env"] + " seed " + recorded["seed"] + ", made with " +
                                option + " " + it->second + "; this command asks for " + value +
                                " (" + file.string() + "). Pass the same options to reuse it, " +
                                "or use another --work-dir (or delete this one) to train anew.");
  }
}

}  // namespace minrnn::rl
