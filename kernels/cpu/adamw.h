// FusedAdamW's CPU loop (ops/fused_adamw.cpp): torch's AdamW on a range of one parameter's
// elements, one at a time (kernels/math/adamw_math.h), the gradient times grad_scale first.
#pragma once
#include <cstdint>

#include "kernels/math/adamw_math.h"

namespace minrnn::core {

// Over [begin, end) of p, g, m, v (float32, contiguous); grad_scale 1 uses the gradient's bits.
void adamw_range(float* p, const float* g, float* m, float* v, int64_t begin, int64_t end,
                 const AdamWUpdate& update, float grad_scale);

}  // namespace minrnn::core
