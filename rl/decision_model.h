// The decision agent: Decision Transformer's token layout with a swappable sequence backbone.
//
//   tokens  (R_1, s_1, a_1, R_2, s_2, a_2, ...)   each embedded by its own Linear, plus the
//           timestep embedding of its step            → LayerNorm → backbone → a_t =
//           tanh(W·out(s_t))
//
// The action for step t is read from the state token's output, so it depends on R_≤t, s_≤t, a_<t.
// Recurrent backbones ("mingru", "minlstm") also run in streaming mode (act / observe_action):
// O(1) work per env step with the state carried, for a batch of episodes at once.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "models/sequence_model.h"

namespace minrnn::rl {

// The backbones a DecisionModel builds: "mingru", "minlstm", "hgrn", "transformer".
const std::vector<std::string>& backbone_names();
// "" where `name` is one of them, else why not: "unknown backbone 'x' (did you mean …) (known: …)".
std::string unknown_backbone(const std::string& name);

struct DecisionModelOptions {
  int64_t obs_dim = 0;
  int64_t act_dim = 0;
  std::string backbone = "mingru";  // one of backbone_names()
  int64_t n_layers = 3;
  int64_t embed_dim = 128;
  int64_t n_heads = 1;     // transformer only
  double expansion = 1.0;  // minRNN hidden width / embed_dim
  bool conv = false;       // minRNN only: causal depthwise Conv1d (kernel 4) before the recurrence
  bool log_space = true;   // minRNN only: positive candidates g(·), the paper's log-space form
  double dropout = 0.1;
  int64_t max_ep_len = 1000;  // timesteps are clamped into [0, max_ep_len]
};

// A batch of DT windows as tensors (B = batch, K = context).
struct DecisionBatch {
  torch::Tensor returns_to_go;  // (B,K,1) already divided by the return scale
  torch::Tensor states;         // (B,K,obs_dim) normalized
  torch::Tensor actions;        // (B,K,act_dim)
  torch::Tensor timesteps;      // (B,K) int64
};

class DecisionModelImpl : public torch::nn::Module {
 public:
  explicit DecisionModelImpl(const DecisionModelOptions& options);

  // Parallel mode: predicted actions (B,K,act_dim). With `state` (recurrent backbones only) the
  // backbone starts from it and leaves its final state there.
  torch::Tensor forward(const DecisionBatch& batch, core::SequenceState* state = nullptr);

  // Streaming mode (streaming() only). For step t of B episodes: feed R_t and s_t, get a_t (B,act).
  torch::Tensor act(const torch::Tensor& rtg, const torch::Tensor& state_obs,
                    const torch::Tensor& timestep, core::SequenceState& state);
  // Then feed the action actually taken, so the next act() sees it.
  void observe_action(const torch::Tensor& action, const torch::Tensor& timestep,
                      core::SequenceState& state);

  core::SequenceState initial_state() const { return backbone->initial_state(); }
  bool streaming() const { return backbone->streaming(); }
  const DecisionModelOptions& options() const { return options_; }

  torch::nn::Linear embed_return{nullptr}, embed_state{nullptr}, embed_action{nullptr};
  torch::nn::Embedding embed_timestep{nullptr};
  torch::nn::LayerNorm embed_norm{nullptr};
  torch::nn::Dropout embed_dropout{nullptr};
  std::shared_ptr<core::SequenceModel> backbone;
  torch::nn::Linear predict_action{nullptr};

 private:
  torch::Tensor time_embedding(const torch::Tensor& timesteps);
  // The embedding dropout the backbone applies to the normed tokens (its input).
  core::InputDropout token_dropout() const;
  void init_as_corl_dt();
  // One token (B,D) through norm/dropout and one backbone step.
  torch::Tensor step_token(const torch::Tensor& token, core::SequenceState& state);
  DecisionModelOptions options_;
};
TORCH_MODULE(DecisionModel);

// Builds the backbone by name; std::invalid_argument listing the known names otherwise.
std::shared_ptr<core::SequenceModel> make_backbone(const DecisionModelOptions& options);

}  // namespace minrnn::rl
