// minGRU and minLSTM (Feng et al. 2024, "Were RNNs All We Needed?", §3 and appendices A–B).
//   minGRU:  z = σ(k),  h̃ = Linear_h(x),            h_t = (1 − z) ⊙ h_{t−1} + z ⊙ h̃
//   minLSTM: f' = f/(f+i), i' = i/(f+i),             h_t = f' ⊙ h_{t−1} + i' ⊙ h̃
// The log-space variant (App. B, used for training in the paper) makes h̃ = g(Linear_h(x)) > 0 with
// g(x) = x + 0.5 for x ≥ 0, σ(x) otherwise, so the scan can run on logs.
#pragma once
#include <torch/torch.h>

#include "ops/scan.h"

namespace minrnn::core {

enum class CellKind { kMinGRU, kMinLSTM };
enum class ScanMode {
  kFused,        // gated_projection_scan: gates fused into the fast CPU/CUDA kernel (default)
  kLogParallel,  // the paper's cumsum + logcumsumexp (needs log_space)
  kSequential,   // a loop of torch ops over t (reference)
};

const char* cell_name(CellKind cell);
CellKind parse_cell(const std::string& name);  // "mingru" | "minlstm"

struct MinRnnOptions {
  CellKind cell = CellKind::kMinGRU;
  int64_t input_size = 0;  // d_x
  double expansion = 1.0;  // d_h = round(expansion · d_x)
  int64_t output_size =
      0;  // width after the down-projection; 0 = d_x. No projection when d_h == it.
  bool log_space = true;
  ScanMode scan = ScanMode::kFused;
};

class MinRnnImpl : public torch::nn::Module {
 public:
  explicit MinRnnImpl(const MinRnnOptions& options);

  // Parallel mode. x: (B,T,d_x); h0: (B,d_h) or undefined (zeros). Returns (B,T,output); the final
  // hidden state (B,d_h) goes to *h_last when given. A zero h0 is the decision agent's, in training
  // and in the streaming policy alike; the paper's log-space minGRU listing starts from
  // log_g(h_0), which makes a zero h_0 an effective 0.5 (its first tokens differ, ~0.4 at token 1).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& h0 = {},
                        torch::Tensor* h_last = nullptr);
  // Sequential mode, one token: x_t (B,d_x); h (B,d_h) is replaced by h_t. Returns (B,output).
  torch::Tensor step(const torch::Tensor& x_t, torch::Tensor& h);

  int64_t hidden_size() const { return hidden_; }
  int64_t output_size() const { return output_; }
  const MinRnnOptions& options() const { return options_; }

  // One fused projection d_x → [z, h̃] (minGRU, 2·d_h) or [f, i, h̃] (minLSTM, 3·d_h).
  torch::nn::Linear gates{nullptr};
  torch::nn::Linear down{nullptr};  // d_h → output, only when they differ

 private:
  struct Coefficients {
    torch::Tensor a, b;  // h_t = a ⊙ h_{t−1} + b
  };
  torch::Tensor gate_logit(const std::vector<torch::Tensor>& parts) const;
  Coefficients coefficients(const torch::Tensor& pre) const;
  Coefficients log_coefficients(const torch::Tensor& pre) const;
  torch::Tensor project(const torch::Tensor& h);

  MinRnnOptions options_;
  int64_t hidden_ = 0, output_ = 0;
};
TORCH_MODULE(MinRnn);

}  // namespace minrnn::core
