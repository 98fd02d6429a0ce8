// How a tuned product's algorithm is chosen (ops/tuned_gemm_cuda.h): cuBLASLt's candidates for
// one call listed, each timed briefly on the call's own operands, the fastest few checked against
// LibTorch's path and timed beside it, the fastest kept. Built only with CUDA.
#pragma once
#include <cublasLt.h>
#include <torch/torch.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "ops/cublaslt_product_cuda.h"

namespace minrnn::core::tuned_gemm {

// What a shape's first call chose, and what the choice rested on: one of cuBLASLt's candidates,
// or LibTorch's own path (bmm, then the bias added or a's sums taken apart) where none beat it.
struct Choice {
  cublasLtMatmulAlgo_t algo{};
  bool libtorch = false, kept = false;  // kept: read from the choices' file, not timed here
  double us = 0, first_us = 0, libtorch_us = 0;
  int timed = 0, rejected = 0;  // candidates timed; refused (failed, or disagreed with LibTorch)
  size_t listed = 0;            // candidates cuBLASLt offered
  double listing_ms = 0, tuning_ms = 0;  // wall time to list them, then to time and check them
  bool judged = true;                    // false: operands not finite, nothing compared (nor kept)
};

// Everything a call has to write out = a · b (+ bias, or with a's sums) with: the product as
// cuBLASLt takes it, the key its choice is kept under, LibTorch's path, and the outputs both
// write (the product, then a's sums where asked).
struct ProductCall {
  const cublaslt::Product& product;
  std::vector<int64_t> key;
  std::function<void()> libtorch;
  std::vector<torch::Tensor> outputs;
  bool tf32;
  bool wide_search;  // cublaslt::candidates' `wide`
};

// The choice for `call`, from everything cuBLASLt offers for its product and LibTorch's path,
// with how long listing and timing them took. Synchronizes the device; never inside a capture.
Choice search(const ProductCall& call);

}  // namespace minrnn::core::tuned_gemm
