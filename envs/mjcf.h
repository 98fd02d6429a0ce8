// The locomotion models, written in MJCF from REFERENCE.md §1 in local coordinates (MuJoCo
// >= 2.3.4 rejects gym's coordinate="global"), embedded in the library and compiled from memory so
// nothing depends on the working directory.
#pragma once
#include <mujoco/mujoco.h>

#include <memory>
#include <string>

namespace minrnn::envs {

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct DataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using ModelPtr = std::unique_ptr<mjModel, ModelDeleter>;
using DataPtr = std::unique_ptr<mjData, DataDeleter>;

// The MJCF text of a model: "halfcheetah", "hopper" (both serve v4 and v5: Gymnasium 1.x loads
// the same half_cheetah.xml / hopper.xml for both), "walker2d" (v2-v4) or "walker2d-v5";
// std::invalid_argument otherwise.
const std::string& embedded_mjcf(const std::string& model_name);

// Compiles an MJCF document held in memory (file_name is only what MuJoCo's messages call it).
// Throws std::runtime_error carrying MuJoCo's parser/compiler message.
ModelPtr compile_mjcf(const std::string& file_name, const std::string& xml);

// compile_mjcf(embedded_mjcf(model_name)), compiled once per process and shared: every env of a
// model holds the same read-only mjModel (MuJoCo's model for many mjData, thread-safe since
// nothing writes it), so a rollout of 100 episodes parses and compiles the XML once, not 100
// times (it was ~1.5 ms an env, a third of a 100-step benchmark rollout).
std::shared_ptr<const mjModel> load_embedded_model(const std::string& model_name);

}  // namespace minrnn::envs
