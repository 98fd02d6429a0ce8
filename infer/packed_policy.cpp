// The packed engine of Policy: DecisionModel's embeddings and action head packed beside the packed
// backbone (infer/packed_backbone.h). One env step is one chunk of tokens:
//   streaming  (a_{t−1}, R_t, s_t) continuing the carried state — one pass over the weights;
//   window     the last K steps' tokens (3m − 1 of them: the newest action token is unseen under
//              the causal mask) from a zero state. Each step's tokens are embedded once and kept
//              in a ring of K slots, so a window only re-runs the backbone.
#include <algorithm>
#include <stdexcept>

#include "infer/pack.h"
#include "infer/packed_backbone.h"
#include "infer/policy_engine.h"
#include "kernels/cpu/workers.h"

namespace minrnn::rl {
namespace {

using core::cpu::Dense;
using core::cpu::reserve;

class PackedEngine final : public PolicyEngineImpl {
 public:
  PackedEngine(const Agent& agent, EvalMode mode, int threads)
      : streaming_(mode == EvalMode::kStreaming), K_(agent.config.context_len) {
    if (threads > 1) workers_ = std::make_unique<io::Workers>(threads);
    const DecisionModelImpl& m = *agent.model;
    const auto& o = m.options();
    D_ = o.embed_dim;
    obs_dim_ = o.obs_dim;
    act_dim_ = o.act_dim;
    max_t_ = o.max_ep_len;
    embed_return_ = core::cpu::pack_dense(*m.embed_return);
    embed_state_ = core::cpu::pack_dense(*m.embed_state);
    embed_action_ = core::cpu::pack_dense(*m.embed_action);
    time_table_ = core::cpu::to_vector(m.embed_timestep->weight);
    embed_norm_ = core::cpu::pack_norm(*m.embed_norm);
    head_ = core::cpu::pack_dense(*m.predict_action);
    backbone_ = core::pack_backbone(*m.backbone);
    if (streaming_ && !backbone_->streaming()) {
      throw std::invalid_argument("fast policy: backbone '" + o.backbone +
                                  "' has no streaming mode (use window)");
    }
    reset(1);
  }

  // All or none, as the backbone's: a batch that cannot be allocated changes nothing.
  void reset(int64_t batch) override {
    std::vector<float> previous(batch * act_dim_, 0.0f);
    std::vector<float> ring(streaming_ ? 0 : batch * K_ * 3 * D_, 0.0f);
    backbone_->reset(batch);
    B_ = batch;
    previous_.swap(previous);
    ring_.swap(ring);
  }

  void act(const float* rtg, const float* obs, int64_t t, float* actions) override {
    const core::cpu::WorkersScope products_split(workers_.get());
    const int64_t B = B_, D = D_;
    // This step's return and state tokens, and the previous step's action token.
    float* tokens = reserve(tokens_, B * 3 * D);  // (B, 3, D): a_{t−1}, R_t, s_t
    if (t > 0) embed(embed_action_, previous_.data(), t - 1, tokens, 0);
    embed(embed_return_, rtg, t, tokens, 1);
    embed(embed_state_, obs, t, tokens, 2);
    float* out = reserve(out_, B * D);
    if (streaming_) {
      // The chunk is the backbone's input as laid out; at t = 0 there is no action token yet, so
      // each episode's (R_0, s_0) moves down over it (a forward copy: the target lies before).
      int64_t n = 3;
      if (t == 0) {
        for (int64_t b = 0; b < B; ++b) {
          std::copy(tokens + (b * 3 + 1) * D, tokens + (b * 3 + 3) * D, tokens + b * 2 * D);
        }
        n = 2;
      }
      backbone_->run(tokens, n, out, /*last_only=*/true);
    } else {
      run_window(tokens, t, out);
    }
    core::cpu::dense(head_, out, B, actions);
    core::cpu::tanh_inplace(actions, B * act_dim_);
    std::copy_n(actions, B * act_dim_, previous_.data());
  }

 private:
  // tokens[b, slot] = LN(W · input_b + bias + time(t)) for B inputs of `d.in` values each.
  void embed(const Dense& d, const float* input, int64_t t, float* tokens, int64_t slot) {
    const int64_t D = D_;
    core::cpu::dense(d, input, B_, tokens + slot * D, false, d.in, 3 * D);
    const float* time = time_table_.data() + std::clamp<int64_t>(t, 0, max_t_) * D;
    for (int64_t b = 0; b < B_; ++b) {
      float* row = tokens + (b * 3 + slot) * D;
      core::cpu::add(row, time, D);
      core::cpu::layer_norm(embed_norm_, row, 1, row);
    }
  }

  // Ring slot j % K of each episode holds step j's (R, s, a) tokens; the window is steps
  // max(0, t − K + 1) .. t, the last without its action token.
  void run_window(const float* tokens, int64_t t, float* out) {
    const int64_t B = B_, D = D_, K = K_;
    auto slot = [&](int64_t b, int64_t step) {
      return ring_.data() + ((b * K + step % K) * 3) * D;
    };
    for (int64_t b = 0; b < B; ++b) {
      if (t > 0) std::copy_n(tokens + b * 3 * D, D, slot(b, t - 1) + 2 * D);  // a_{t−1}
      std::copy_n(tokens + (b * 3 + 1) * D, 2 * D, slot(b, t));               // R_t, s_t
    }
    const int64_t first = std::max<int64_t>(0, t - K + 1), steps = t - first + 1;
    const int64_t n = 3 * steps - 1;
    float* x = reserve(x_, B * n * D);
    for (int64_t b = 0; b < B; ++b) {
      float* dst = x + b * n * D;
      for (int64_t j = first; j <= t; ++j) {
        const int64_t count = j < t ? 3 : 2;
        std::copy_n(slot(b, j), count * D, dst);
        dst += count * D;
      }
    }
    backbone_->reset(B);
    backbone_->run(x, n, out, /*last_only=*/true);
  }

  bool streaming_;
  int64_t K_, D_ = 0, obs_dim_ = 0, act_dim_ = 0, max_t_ = 0, B_ = 1;
  Dense embed_return_, embed_state_, embed_action_, head_;
  std::vector<float> time_table_;  // (max_ep_len + 1, D)
  core::cpu::Norm embed_norm_;
  std::unique_ptr<core::PackedBackbone> backbone_;
  std::unique_ptr<io::Workers> workers_;  // none: the calling thread alone
  std::vector<float> previous_, ring_, tokens_, x_, out_;
};

}  // namespace

std::unique_ptr<PolicyEngineImpl> make_packed_engine(const Agent& agent, EvalMode mode,
                                                     int threads) {
  return std::make_unique<PackedEngine>(agent, resolve_eval_mode(mode, agent), threads);
}

}  // namespace minrnn::rl
