// The linear recurrence at the heart of minGRU, minLSTM and HGRN:
//     h_t = a_t ⊙ h_{t-1} + b_t,   t = 1..T,   h_0 given (zeros when undefined).
// Tensors are (B, T, D); h0 and the final state are (B, D).
#pragma once
#include <torch/torch.h>

namespace minrnn::core {

struct ScanResult {
  torch::Tensor h;       // (B, T, D): h_1 .. h_T
  torch::Tensor h_last;  // (B, D): h_T (h_0 when T == 0)
};

// The fast path, differentiable: CUDA tensors run the CUDA kernel (when built with CUDA), CPU
// tensors a threaded kernel (float32/float64; bfloat16/half are computed in float32).
ScanResult linear_scan(const torch::Tensor& a, const torch::Tensor& b,
                       const torch::Tensor& h0 = {});

// The minGRU / minLSTM recurrence with the gate math fused into the scan kernel, so no (B,T,D)
// gate tensors are materialised:  a_t = σ(−u_t),  b_t = σ(u_t) · cand(c_t),  where u is the gate
// logit (minGRU: k; minLSTM: log i − log f), c the candidate pre-activation and cand = g_positive
// (the log-space cell) or the identity (vanilla). u, c: (B,T,D). Differentiable in u, c, h0.
ScanResult gated_scan(const torch::Tensor& u, const torch::Tensor& c, const torch::Tensor& h0 = {},
                      bool positive_candidate = true);
// Its reference: the gates by torch ops, then linear_scan_sequential.
ScanResult gated_scan_reference(const torch::Tensor& u, const torch::Tensor& c,
                                const torch::Tensor& h0 = {}, bool positive_candidate = true);

// gated_scan read straight from a minRNN cell's gate projection pre (B,T,G·D): its column blocks
// [k | c] (G = 2, minGRU: u = k) or [p | k | c] (G = 3, minLSTM: its gates f/(f+i), i/(f+i)
// computed inside the kernel, scan_math.h). No block is copied out and the backward writes
// pre's gradient as one tensor, so neither direction pays a copy or a cat, and only pre (not u
// and c besides) is kept for the backward. Differentiable in pre and h0.
ScanResult gated_projection_scan(const torch::Tensor& pre, int64_t gates,
                                 const torch::Tensor& h0 = {}, bool positive_candidate = true);
// Its reference: u by torch ops (minlstm_gate_logit), then gated_scan_reference.
ScanResult gated_projection_scan_reference(const torch::Tensor& pre, int64_t gates,
                                           const torch::Tensor& h0 = {},
                                           bool positive_candidate = true);

// minLSTM's gate logit u = log i − log f = log σ(k) − log σ(p) (App. B.2.2: the paper's
// softplus(−p) − softplus(−k), here without softplus's threshold, so exact), with a = σ(−u) =
// f/(f+i) and σ(u) = i/(f+i). The torch form of what the fused kernel computes without logs.
torch::Tensor minlstm_gate_logit(const torch::Tensor& p, const torch::Tensor& k);

// g and log g of the log-space cell (App. B.3, Listing 6): g(x) = x + ½ (x ≥ 0), σ(x) (x < 0).
torch::Tensor g_positive(const torch::Tensor& x);
torch::Tensor log_g_positive(const torch::Tensor& x);

// The reference: a plain loop over t of torch ops (autograd through torch). Slow; for tests.
ScanResult linear_scan_sequential(const torch::Tensor& a, const torch::Tensor& b,
                                  const torch::Tensor& h0 = {});

// The paper's parallel log-space scan (App. B.1, after Heinsen 2023): inputs are log a_t (B,T,D),
// log b_t (B,T,D) and log h_0 (B,D) (undefined = -inf, i.e. h_0 = 0); needs b_t, h_0 > 0.
//     a*_t = Σ_{s≤t} log a_s,   h_t = exp(a*_t + logcumsumexp_t(log b - a*))
ScanResult linear_scan_log_parallel(const torch::Tensor& log_a, const torch::Tensor& log_b,
                                    const torch::Tensor& log_h0 = {});

// The complex recurrence (HGRN, Qin et al. 2023, eq. 2): h_t = a_t ⊙ h_{t-1} + b_t with complex a,
// b, h carried as real/imaginary pairs of real tensors (a_re, a_im: (B,T,D); h0_re, h0_im: (B,D),
// both undefined = zeros). CPU and CUDA tensors run kernels with their own backward
// (scan_complex.cpp, kernels/cuda/scan.cu); other devices fall back to
// linear_scan_complex_sequential.
struct ComplexScanResult {
  torch::Tensor h_re, h_im;            // (B, T, D)
  torch::Tensor h_last_re, h_last_im;  // (B, D)
};
ComplexScanResult linear_scan_complex(const torch::Tensor& a_re, const torch::Tensor& a_im,
                                      const torch::Tensor& b_re, const torch::Tensor& b_im,
                                      const torch::Tensor& h0_re = {},
                                      const torch::Tensor& h0_im = {});
// The reference: a loop over t of real torch ops on the pairs. Slow; for tests.
ComplexScanResult linear_scan_complex_sequential(
    const torch::Tensor& a_re, const torch::Tensor& a_im, const torch::Tensor& b_re,
    const torch::Tensor& b_im, const torch::Tensor& h0_re = {}, const torch::Tensor& h0_im = {});

// "[2, 3, 4]": a tensor's shape for error messages (shared by every core/ input check).
std::string shape_of(const torch::Tensor& t);

// True when linear_scan would run the CUDA kernel for tensors on this device.
bool cuda_scan_available();

}  // namespace minrnn::core
