// The blocks' MLP — Linear → exact GELU → Linear, in every minRNN block and the Transformer's — as
// one autograd op over the nn::Sequential's own parameters, so state dicts, checkpoints and the
// packed engine's packing (cpu::pack_mlp) are unchanged.
//
// Through the Sequential a training step pays five ops and their passes over the (rows, 4·d)
// hidden activation: a bias add after the GEMM, GELU, its backward, and a column sum for the
// bias's gradient. Here the bias add and GELU are one vectorised pass, and the backward applies
// gelu' while summing the bias gradient in the same pass (on the CPU from GELU′ the forward wrote
// where the pre-activation was; on CUDA recomputed from the pre-activation, which the forward
// keeps instead of writing GELU′).
// CPU float32 (the loops of kernels/cpu/float_loops.h) and CUDA float32/float64 (the kernels of
// kernels/cuda/pointwise_programs.h, emulated in the tests); anything else runs the Sequential
// itself, which is also what the tests compare against.
#pragma once
#include <torch/torch.h>

namespace minrnn::core {

// A pack's runs stacked (ops/run_axis.h): the Linears' weights (P, out, in), biases (P, out), dim 0
// of x the runs' rows.
torch::Tensor mlp_forward(torch::nn::Sequential& mlp, const torch::Tensor& x);

}  // namespace minrnn::core
