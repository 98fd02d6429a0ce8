// The training config's keys under the names CORL's dt.py gives them: the Decision Transformer most
// users come from. Its names are no typos of ours (no edit distance finds lr from learning_rate),
// so an unknown key that is one of them is answered with ours.
#pragma once
#include <string>

namespace minrnn::rl {

// Our key for CORL's `name`; nullptr where it is none of CORL's.
inline const char* our_name_for_corls(const std::string& name) {
  static const char* const kPairs[][2] = {{"learning_rate", "lr"},
                                          {"update_steps", "max_steps"},
                                          {"seq_len", "context_len"},
                                          {"episode_len", "max_ep_len"},
                                          {"embedding_dim", "embed_dim"},
                                          {"num_layers", "n_layers"},
                                          {"num_heads", "n_heads"},
                                          {"clip_grad", "grad_clip"},
                                          {"reward_scale", "return_scale"},
                                          {"target_returns", "target_return"},
                                          {"env_name", "env"},
                                          {"train_seed", "seed"},
                                          {"residual_dropout", "dropout"},
                                          {"embedding_dropout", "dropout"},
                                          {"attention_dropout", "dropout"}};
  for (const auto& pair : kPairs)
    if (name == pair[0]) return pair[1];
  return nullptr;
}

}  // namespace minrnn::rl
