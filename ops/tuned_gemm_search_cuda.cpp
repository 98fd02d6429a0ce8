// How a tuned product's algorithm is chosen (tuned_gemm_search_cuda.h).
#include "ops/tuned_gemm_search_cuda.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

namespace minrnn::core::tuned_gemm {
namespace {

// µs a call of `run` (a few calls after two to warm up), or infinity where it fails.
double time_us(const std::function<bool()>& run, int warm = 2, int timed = 5) {
  for (int i = 0; i < warm; ++i) {
    if (!run()) return std::numeric_limits<double>::infinity();
  }
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  cudaEvent_t start, end;
  C10_CUDA_CHECK(cudaEventCreate(&start));
  C10_CUDA_CHECK(cudaEventCreate(&end));
  C10_CUDA_CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < timed; ++i) run();
  C10_CUDA_CHECK(cudaEventRecord(end, stream));
  C10_CUDA_CHECK(cudaEventSynchronize(end));
  float ms = 0;
  C10_CUDA_CHECK(cudaEventElapsedTime(&ms, start, end));
  C10_CUDA_CHECK(cudaEventDestroy(start));
  C10_CUDA_CHECK(cudaEventDestroy(end));
  return 1e3 * ms / timed;
}

// The fastest of cuBLASLt's candidates and LibTorch's path, timed with nothing else on the
// device: the tuned product is never slower than the bmm it replaces, as far as timing tells.
// Candidates are timed briefly (one launch after one) in cuBLASLt's order until kBudget times
// LibTorch's product is spent; the kFinalists fastest are then checked against LibTorch's product
// — one that strays by more than rounding (kAgreement of its largest entry) is refused: a wrong
// algorithm is never kept, however fast — and timed as LibTorch's path is (five after two).
Choice tune(const ProductCall& call, const std::vector<cublasLtMatmulHeuristicResult_t>& found) {
  constexpr double kAgreementFp32 = 1e-4, kAgreementTf32 = 1e-2, kBudget = 600;
  constexpr size_t kFinalists = 6;
  C10_CUDA_CHECK(cudaDeviceSynchronize());
  Choice best;
  best.libtorch = true;
  best.us = best.libtorch_us = time_us([&] {
    call.libtorch();
    return true;
  });
  // Each output's reference, and how far from it rounding may take a candidate's.
  std::vector<std::pair<torch::Tensor, double>> references;
  const double agreement = call.tf32 ? kAgreementTf32 : kAgreementFp32;
  for (const torch::Tensor& out : call.outputs) {
    const double largest = out.abs().max().item<double>();
    // Operands with a NaN or an infinity (a run diverging at once) say nothing of the
    // candidates: LibTorch's path, for this process alone.
    best.judged = best.judged && std::isfinite(largest);
    references.emplace_back(out.clone(), agreement * largest);
  }
  if (!best.judged) return best;
  const auto agrees = [&] {
    for (size_t o = 0; o < references.size(); ++o) {
      const auto& [reference, tolerance] = references[o];
      if (!((call.outputs[o] - reference).abs().max().item<double>() <= tolerance)) return false;
    }
    return true;
  };
  const auto runner = [&](size_t i) {
    return [&, i] { return call.product.run(found[i].algo) == CUBLAS_STATUS_SUCCESS; };
  };
  std::vector<std::pair<double, size_t>> brief;  // (µs, candidate)
  double spent = 0;
  for (size_t i = 0; i < found.size() && spent < kBudget * best.libtorch_us; ++i) {
    const double us = time_us(runner(i), 1, 1);
    spent += 2 * (std::isfinite(us) ? us : best.libtorch_us);
    if (!std::isfinite(us)) {
      ++best.rejected;
      continue;
    }
    brief.emplace_back(us, i);
    if (i == 0) best.first_us = us;
    ++best.timed;
  }
  std::sort(brief.begin(), brief.end());
  if (brief.size() > kFinalists) brief.resize(kFinalists);
  for (const auto& [ignored, i] : brief) {
    if (!runner(i)() || !agrees()) {
      ++best.rejected;
      continue;
    }
    const double us = time_us(runner(i));
    if (us < best.us) best.algo = found[i].algo, best.us = us, best.libtorch = false;
  }
  return best;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

Choice search(const ProductCall& call) {
  const auto listing = std::chrono::steady_clock::now();
  const std::vector<cublasLtMatmulHeuristicResult_t> found =
      cublaslt::candidates(call.product, call.wide_search);
  const double listing_ms = ms_since(listing);
  const auto tuning = std::chrono::steady_clock::now();
  Choice choice = tune(call, found);
  choice.tuning_ms = ms_since(tuning);
  choice.listing_ms = listing_ms;
  choice.listed = found.size();
  return choice;
}

}  // namespace minrnn::core::tuned_gemm
