#include "rl/decision_model.h"

#include <algorithm>
#include <stdexcept>

#include "io/name_list.h"
#include "models/hgrn.h"
#include "models/minrnn_stack.h"
#include "models/transformer.h"
#include "ops/residual_norm.h"
#include "ops/tanh_head.h"
#include "ops/token_embedding.h"

namespace minrnn::rl {

const std::vector<std::string>& backbone_names() {
  static const std::vector<std::string> names = {"mingru", "minlstm", "hgrn", "transformer"};
  return names;
}

std::string unknown_backbone(const std::string& name) {
  const std::vector<std::string>& known = backbone_names();
  if (std::find(known.begin(), known.end(), name) != known.end()) return "";
  return "unknown backbone '" + name + "'" + io::known_names_hint(name, known);
}

std::shared_ptr<core::SequenceModel> make_backbone(const DecisionModelOptions& o) {
  if (o.backbone == "mingru" || o.backbone == "minlstm") {
    core::BlockOptions b;
    b.cell = core::parse_cell(o.backbone);
    b.d_model = o.embed_dim;
    b.expansion = o.expansion;
    b.conv = o.conv;
    b.log_space = o.log_space;
    b.dropout = o.dropout;
    return std::make_shared<core::MinRnnStack>(b, o.n_layers);
  }
  // Where no minRNN block is built, its options would be dropped without a word.
  if (o.conv || !o.log_space) {
    throw std::invalid_argument("DecisionModel: conv and log_space = false are minGRU/minLSTM " +
                                std::string("options; backbone '") + o.backbone +
                                "' has no such block");
  }
  if (o.backbone == "hgrn") {
    return std::make_shared<core::HgrnStack>(o.embed_dim, o.n_layers, o.dropout, o.expansion);
  }
  if (o.backbone == "transformer") {
    core::TransformerOptions t;
    t.d_model = o.embed_dim;
    t.n_heads = o.n_heads;
    t.dropout = o.dropout;
    return std::make_shared<core::TransformerStack>(t, o.n_layers);
  }
  throw std::invalid_argument(unknown_backbone(o.backbone));
}

namespace {

// The tokens' LayerNorm as the residual join's op with no residual and no dropout
// (ops/residual_norm.h): on CUDA one launch forward and two backward, where LibTorch's LayerNorm
// takes three and its γ, β gradient alone ~13 µs of an H200's training step.
torch::Tensor normed(const torch::Tensor& tokens, const torch::nn::LayerNorm& norm) {
  return core::add_dropout_norm({}, tokens, 0.0, false, norm).normed;
}

}  // namespace

DecisionModelImpl::DecisionModelImpl(const DecisionModelOptions& o) : options_(o) {
  if (o.obs_dim <= 0 || o.act_dim <= 0) {
    throw std::invalid_argument("DecisionModel: obs_dim and act_dim must be positive");
  }
  const int64_t d = o.embed_dim;
  embed_return = register_module("embed_return", torch::nn::Linear(1, d));
  embed_state = register_module("embed_state", torch::nn::Linear(o.obs_dim, d));
  embed_action = register_module("embed_action", torch::nn::Linear(o.act_dim, d));
  embed_timestep = register_module("embed_timestep", torch::nn::Embedding(o.max_ep_len + 1, d));
  embed_norm =
      register_module("embed_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
  embed_dropout = register_module("embed_dropout", torch::nn::Dropout(o.dropout));
  backbone = register_module("backbone", make_backbone(o));
  predict_action = register_module("predict_action", torch::nn::Linear(d, o.act_dim));
  if (o.backbone == "transformer") init_as_corl_dt();
}

// The Transformer baseline starts where CORL's Decision Transformer (the peer, `_init_weights`)
// starts: every Linear and Embedding N(0, 0.02), biases 0; the attention's input projection as
// PyTorch's MultiheadAttention makes its in_proj (Xavier uniform, bias 0), which CORL's rule does
// not reach. The minRNN backbones keep PyTorch's default init, as the minRNN paper states.
void DecisionModelImpl::init_as_corl_dt() {
  torch::NoGradGuard no_grad;
  for (const auto& item : named_modules("", /*include_self=*/false)) {
    const std::string& name = item.key();
    if (auto* linear = item.value()->as<torch::nn::Linear>()) {
      const bool in_proj = name.size() >= 8 && name.compare(name.size() - 8, 8, "attn.qkv") == 0;
      if (in_proj) {
        torch::nn::init::xavier_uniform_(linear->weight);
      } else {
        torch::nn::init::normal_(linear->weight, 0.0, 0.02);
      }
      if (linear->bias.defined()) torch::nn::init::zeros_(linear->bias);
    } else if (auto* embedding = item.value()->as<torch::nn::Embedding>()) {
      torch::nn::init::normal_(embedding->weight, 0.0, 0.02);
    }
  }
}

torch::Tensor DecisionModelImpl::time_embedding(const torch::Tensor& timesteps) {
  // Evaluation can run past the longest training episode; clamp rather than index out of range.
  return embed_timestep(timesteps.clamp(0, options_.max_ep_len));
}

torch::Tensor DecisionModelImpl::forward(const DecisionBatch& b, core::SequenceState* state) {
  // The interleaved sequence (R_1, s_1, a_1, R_2, …) with the time embedding added, in one op.
  // The last token a_K reaches no output the loss reads (the backbones are causal): without a
  // state to advance through it, the backbone never sees it (1/(3K) of a training step).
  const int64_t K = b.states.size(1);
  const torch::Tensor tokens =
      core::embed_tokens({{b.returns_to_go, embed_return->weight, embed_return->bias},
                          {b.states, embed_state->weight, embed_state->bias},
                          {b.actions, embed_action->weight, embed_action->bias}},
                         b.timesteps, embed_timestep->weight, state ? 3 * K : 3 * K - 1);
  // Actions are read off the state tokens s_1 … s_K (positions 1, 4, 7, …) alone. The backbone
  // drops the normed tokens out itself, in one op with its first norm.
  auto state_out = backbone->forward(normed(tokens, embed_norm), state, core::TokenSelection{1, 3},
                                     token_dropout());
  return core::tanh_head(state_out, predict_action->weight, predict_action->bias);
}

core::InputDropout DecisionModelImpl::token_dropout() const {
  return {embed_dropout->options.p(), embed_dropout->is_training()};
}

torch::Tensor DecisionModelImpl::step_token(const torch::Tensor& token, core::SequenceState& st) {
  return backbone->step(normed(token, embed_norm), st, token_dropout());
}

torch::Tensor DecisionModelImpl::act(const torch::Tensor& rtg, const torch::Tensor& obs,
                                     const torch::Tensor& timestep, core::SequenceState& st) {
  if (!streaming()) {
    throw std::logic_error("DecisionModel::act: backbone '" + options_.backbone +
                           "' is not recurrent; use forward on the last K steps");
  }
  auto time = time_embedding(timestep);  // (B,D)
  step_token(embed_return(rtg) + time, st);
  auto out = step_token(embed_state(obs) + time, st);
  return torch::tanh(predict_action(out));
}

void DecisionModelImpl::observe_action(const torch::Tensor& action, const torch::Tensor& timestep,
                                       core::SequenceState& st) {
  step_token(embed_action(action) + time_embedding(timestep), st);
}

}  // namespace minrnn::rl
