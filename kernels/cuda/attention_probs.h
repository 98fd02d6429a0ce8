// Launchers of causal attention's probability kernels (kernels/cuda/attention_probs_programs.h):
// plain pointers to float32 device arrays of rows and a stream, no torch.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/math/attention_math.h"

namespace minrnn::core::kernels {

// rows × width raw scores in; probs and out (their dropout) out. Rows `pitch` floats apart in each
// array (≥ width: a multiple of 4 keeps cuBLAS's products on them aligned).
struct AttentionProbsArgs {
  int64_t rows, width, pitch;
  HashedDropout dropout;      // its seed added to *seed_base when that is set
  const uint64_t* seed_base;  // device memory, or null
  QueryRows queries;
  float scale;
  const float* scores;
  float *probs, *out;
  // A pack's runs stacked (kernels/math/run_rows.h): rows per run (0: one run), seed_base one a
  // run.
  int64_t rows_per_run = 0;
};
cudaError_t attention_probs_forward(const AttentionProbsArgs& args, cudaStream_t stream);

// From the forward's probs and the gradient of its out: the scores' gradient.
struct AttentionProbsGradArgs {
  int64_t rows, width, pitch;  // as AttentionProbsArgs'
  HashedDropout dropout;
  const uint64_t* seed_base;
  float scale;
  const float *probs, *out_grad;
  float* scores_grad;
  int64_t rows_per_run = 0;  // as AttentionProbsArgs'
};
cudaError_t attention_probs_backward(const AttentionProbsGradArgs& args, cudaStream_t stream);

}  // namespace minrnn::core::kernels
