// The hashed dropout's CPU loop (ops/dropout.h): out = (x +) keep(i) · y · scale over a range of
// flat indices, the mask drawn from the seed and each element's index (kernels/math/
// dropout_math.h), so a backward regenerates it and the CUDA kernel draws the same. No threads
// and no tensors here: ops/dropout.cpp hands ranges to torch's threads.
#pragma once
#include <cstdint>

namespace minrnn::core {

// out[i] = (x[i] +) keep(i) · y[i] · scale for i in [begin, end), x null: no residual; element i
// is dropped where its 32-bit draw is below `threshold`.
void dropout_range(const float* x, const float* y, float* out, int64_t begin, int64_t end,
                   uint64_t seed, int64_t threshold, float scale);
void dropout_range(const double* x, const double* y, double* out, int64_t begin, int64_t end,
                   uint64_t seed, int64_t threshold, double scale);

}  // namespace minrnn::core
