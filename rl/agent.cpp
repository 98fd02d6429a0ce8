#include "rl/agent.h"

#include "envs/registry.h"

namespace minrnn::rl {

double Agent::normalized(double ret) const {
  if (ref_max_score > ref_min_score) {
    return envs::normalized_score(ret, ref_min_score, ref_max_score);
  }
  return envs::normalized_score(env, ret);
}

DecisionModelOptions model_options(const TrainConfig& c, int64_t obs_dim, int64_t act_dim) {
  DecisionModelOptions o;
  o.obs_dim = obs_dim;
  o.act_dim = act_dim;
  o.backbone = c.backbone;
  o.n_layers = c.n_layers;
  o.embed_dim = c.embed_dim;
  o.n_heads = c.n_heads;
  o.expansion = c.expansion;
  o.conv = c.conv;
  o.log_space = c.log_space;
  o.dropout = c.dropout;
  o.max_ep_len = c.max_ep_len;
  return o;
}

}  // namespace minrnn::rl
