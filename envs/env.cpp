#include "envs/env.h"

#include <cmath>
#include <stdexcept>

namespace minrnn::envs {

namespace {
[[noreturn]] void unsupported(const Env& env, const char* what) {
  throw std::logic_error("environment '" + env.spec().name + "' does not support " + what);
}
}  // namespace

std::vector<double> Env::qpos() const {
  unsupported(*this, "qpos()");
}
std::vector<double> Env::qvel() const {
  unsupported(*this, "qvel()");
}
void Env::set_state(const std::vector<double>&, const std::vector<double>&) {
  unsupported(*this, "set_state()");
}
std::vector<double> Env::observation() const {
  unsupported(*this, "observation()");
}
int Env::elapsed_steps() const {
  unsupported(*this, "elapsed_steps()");
}

void check_action(const EnvSpec& spec, const std::vector<double>& action) {
  if (static_cast<int>(action.size()) != spec.act_dim) {
    throw std::invalid_argument(spec.name + ": action has " + std::to_string(action.size()) +
                                " entries, expected act_dim = " + std::to_string(spec.act_dim));
  }
  for (size_t i = 0; i < action.size(); ++i) {
    if (!std::isfinite(action[i])) {
      throw std::invalid_argument(spec.name + ": action[" + std::to_string(i) +
                                  "] is not finite (" + std::to_string(action[i]) + ")");
    }
  }
}

}  // namespace minrnn::envs
