#include "kernels/cpu/token_embedding.h"

namespace minrnn::core {

// Each token's channels at once, so the compiler vectorizes over channels.
void token_embedding_forward(const TokenLayout& s, const TokenGroupsCpu& groups,
                             const int64_t* timesteps, const float* table, float* out) {
  const int64_t D = s.width;
  for (int64_t step = 0; step < s.step_count(); ++step) {
    const float* time = table + time_row(timesteps[step], s.table_rows) * D;
    for (int j = 0; j < s.groups; ++j) {
      const int64_t row = s.token_row(step, j), n = s.inputs[j];
      if (row < 0) continue;
      const float *x = groups.inputs[j] + step * n, *w = groups.weights_t[j];
      const float* bias = groups.biases[j];
      float* token = out + row * D;
      for (int64_t d = 0; d < D; ++d) token[d] = bias[d];
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t d = 0; d < D; ++d) token[d] = token[d] + x[i] * w[i * D + d];
      }
      for (int64_t d = 0; d < D; ++d) token[d] = token[d] + time[d];
    }
  }
}

void token_embedding_backward(const TokenLayout& s, const float* const inputs[],
                              const int64_t* timesteps, const float* tokens_grad,
                              float* const weight_t_grads[], float* const bias_grads[],
                              float* table_grad, float* scratch) {
  const int64_t D = s.width;
  float* summed = scratch;  // the step's tokens' gradients, which its time row takes
  for (int64_t step = 0; step < s.step_count(); ++step) {
    for (int64_t d = 0; d < D; ++d) summed[d] = 0.0f;
    for (int j = 0; j < s.groups; ++j) {
      const int64_t row = s.token_row(step, j), n = s.inputs[j];
      if (row < 0) continue;
      const float* token = tokens_grad + row * D;
      const float* x = inputs[j] + step * n;
      float *bias = bias_grads[j], *w = weight_t_grads[j];
      for (int64_t d = 0; d < D; ++d) {
        bias[d] += token[d];
        summed[d] += token[d];
      }
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t d = 0; d < D; ++d) w[i * D + d] += x[i] * token[d];
      }
    }
    float* time = table_grad + time_row(timesteps[step], s.table_rows) * D;
    for (int64_t d = 0; d < D; ++d) time[d] += summed[d];
  }
}

}  // namespace minrnn::core
