// Attention's probabilities' CPU loops (ops/attention_probs.h): the scale, the causal mask, the
// softmax and the dropout of rows of scores, forward and backward, over a range of rows. No
// threads and no tensors here: ops/attention_probs.cpp hands ranges of rows to torch's threads.
#pragma once
#include <cstdint>

#include "kernels/math/attention_math.h"
#include "kernels/math/dropout_math.h"

namespace minrnn::core {

// Rows [first, end) of T scores, `pitch` floats apart: probs (0 past each query's key) and out,
// their dropout, each element counted as in rows of T.
void attention_probs_forward_rows(const float* scores, int64_t T, int64_t pitch,
                                  const QueryRows& queries, float scale, int64_t first, int64_t end,
                                  const HashedDropout& dropout, float* probs, float* out);

// Rows [first, end) of the scores' gradient from the probabilities and out's gradient, in the
// same pitch.
void attention_probs_backward_rows(const float* probs, const float* out_grad, int64_t T,
                                   int64_t pitch, float scale, int64_t first, int64_t end,
                                   const HashedDropout& dropout, float* scores_grad);

}  // namespace minrnn::core
