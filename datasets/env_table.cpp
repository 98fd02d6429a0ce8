#include "datasets/env_table.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "io/name_list.h"
#include "io/text.h"

namespace minrnn::data {
namespace {

// REFERENCE.md §1 (dimensions, time limit) and §2 (REF_MIN / REF_MAX).
constexpr EnvInfo kEnvs[] = {
    {"halfcheetah", 17, 6, -280.178953, 12135.0, 1000},
    {"hopper", 11, 3, -20.272305, 3234.3, 1000},
    {"walker2d", 17, 6, 1.629008, 4592.3, 1000},
};

}  // namespace

const EnvInfo* find_env(const std::string& name) {
  std::string key = io::lowercase(name);
  for (const EnvInfo& env : kEnvs) {
    size_t n = std::strlen(env.name);
    // "hopper", "hopper-v2", "hopper-medium-v2", "hopper_medium-v2"
    if (key.compare(0, n, env.name) == 0 && (key.size() == n || key[n] == '-' || key[n] == '_')) {
      return &env;
    }
  }
  return nullptr;
}

std::string dims_apart(const std::string& file, int obs_dim, int act_dim, const EnvInfo& env,
                       const std::string& from) {
  return file + ": 'observations'/'actions' have dims " + std::to_string(obs_dim) + "/" +
         std::to_string(act_dim) + " but " + env.name + (from.empty() ? "" : " (" + from + ")") +
         " has " + std::to_string(env.obs_dim) + "/" + std::to_string(env.act_dim);
}

const EnvInfo& require_env(const std::string& name) {
  if (const EnvInfo* env = find_env(name)) return *env;
  std::vector<std::string> known;
  for (const EnvInfo& env : kEnvs) known.push_back(env.name);
  throw std::invalid_argument("unknown environment '" + name + "'" +
                              io::known_names_hint(name, known));
}

const EnvInfo* guess_env_from_name(const std::string& name) {
  std::string key = io::lowercase(name);
  const EnvInfo* found = nullptr;
  size_t found_at = std::string::npos;
  for (const EnvInfo& env : kEnvs) {
    size_t at = key.rfind(env.name);  // the last mention wins: the file name, not a parent folder
    if (at != std::string::npos &&
        (found == nullptr || found_at == std::string::npos || at > found_at)) {
      found = &env;
      found_at = at;
    }
  }
  return found;
}

std::vector<const EnvInfo*> envs_with_dims(int obs_dim, int act_dim) {
  std::vector<const EnvInfo*> found;
  for (const EnvInfo& env : kEnvs)
    if (env.obs_dim == obs_dim && env.act_dim == act_dim) found.push_back(&env);
  return found;
}

const EnvInfo* guess_env_from_dims(int obs_dim, int act_dim) {
  const auto found = envs_with_dims(obs_dim, act_dim);
  return found.size() == 1 ? found.front() : nullptr;
}

}  // namespace minrnn::data
