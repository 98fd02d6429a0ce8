// The tuned products' switches (tuned_gemm_switches.h).
#include "ops/tuned_gemm_switches.h"

#include "io/env_switch.h"

namespace minrnn::core {

bool stacked_products_tuned() {
  return io::env_switch(
      "MINRNN_STACKED_GEMM", true, "cublas", "tuned",
      "tuned (cuBLASLt, each shape's algorithm timed) or cublas (LibTorch's bmm)");
}

bool tuned_products_search_wide() {
  return io::env_switch("MINRNN_STACKED_GEMM_SEARCH", true, "heuristic", "wide",
                        "wide (cuBLASLt's heuristic's candidates, their split-K variants and every "
                        "algorithm's tiles) or heuristic (the heuristic's candidates alone)");
}

bool stacked_bias_grads_in_products() {
  return io::env_switch(
      "MINRNN_STACKED_BIAS_GRAD", true, "apart", "product",
      "product (a weight gradient's product sums its bias's where that is faster) or "
      "apart (the column sums)");
}

}  // namespace minrnn::core
