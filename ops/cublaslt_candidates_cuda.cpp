// cuBLASLt's candidate algorithms for one product (cublaslt_product_cuda.h): its heuristic's,
// their split-K variants, and the configurations it has beyond them, each accepted by cuBLASLt
// for the product and its workspace; and what an algorithm is, in words. Built only with CUDA.
#include <ATen/cuda/CUDAContext.h>
#include <cublasLt.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ops/cublaslt_product_cuda.h"

namespace minrnn::core::cublaslt {
namespace {

// Split-K variants of cuBLASLt's first few candidates (kSplitKBases), each of kSplits parts
// reduced either way cuBLASLt offers, where it accepts them for this product and the workspace
// holds them: its heuristic offered none, and the stacked weight gradients (128 × 128 per run
// from 3 776 rows) filled one wave of 64×64 tiles at ~35 TFLOP/s (H200, 2026-11-28).
void add_split_k_variants(const Product& p, std::vector<cublasLtMatmulHeuristicResult_t>& found) {
  constexpr size_t kSplitKBases = 3;
  constexpr int32_t kSplits[] = {2, 4, 8};
  constexpr uint32_t kSchemes[] = {CUBLASLT_REDUCTION_SCHEME_INPLACE,
                                   CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE};
  const size_t bases = std::min(found.size(), kSplitKBases);
  for (size_t i = 0; i < bases; ++i) {
    int32_t splits_k = 0;
    uint32_t schemes = 0;
    cublasLtMatmulAlgoCapGetAttribute(&found[i].algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &splits_k,
                                      sizeof splits_k, nullptr);
    cublasLtMatmulAlgoCapGetAttribute(&found[i].algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK,
                                      &schemes, sizeof schemes, nullptr);
    if (splits_k == 0) continue;
    for (const int32_t split : kSplits) {
      for (const uint32_t scheme : kSchemes) {
        if ((schemes & scheme) == 0) continue;
        cublasLtMatmulHeuristicResult_t variant = found[i];
        cublasLtMatmulAlgoConfigSetAttribute(&variant.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split,
                                             sizeof split);
        cublasLtMatmulAlgoConfigSetAttribute(&variant.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                             &scheme, sizeof scheme);
        if (p.accepts(variant)) found.push_back(variant);
      }
    }
  }
}

// A capability list of `algo` (tile or stage ids), empty where it has none.
std::vector<uint32_t> capability_ids(const cublasLtMatmulAlgo_t& algo,
                                     cublasLtMatmulAlgoCapAttributes_t attribute) {
  size_t bytes = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, attribute, nullptr, 0, &bytes) !=
      CUBLAS_STATUS_SUCCESS) {
    return {};
  }
  std::vector<uint32_t> ids(bytes / sizeof(uint32_t));
  if (!ids.empty() && cublasLtMatmulAlgoCapGetAttribute(&algo, attribute, ids.data(), bytes,
                                                        &bytes) != CUBLAS_STATUS_SUCCESS) {
    return {};
  }
  return ids;
}

// cuBLASLt's configuration of `algo` with this tile and these stages.
cublasLtMatmulHeuristicResult_t configured(const cublasLtMatmulAlgo_t& algo, uint32_t tile,
                                           uint32_t stages) {
  cublasLtMatmulHeuristicResult_t variant{};
  variant.algo = algo;
  cublasLtMatmulAlgoConfigSetAttribute(&variant.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                       sizeof tile);
  cublasLtMatmulAlgoConfigSetAttribute(&variant.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                       sizeof stages);
  return variant;
}

// One float32 algorithm of cuBLASLt's, with the tiles and stages it lists for itself, its stages
// led by "undefined" (cuBLASLt's own pick, where it accepts that).
struct AlgorithmGrid {
  cublasLtMatmulAlgo_t algo;
  std::vector<uint32_t> tiles, stages;
};

std::vector<AlgorithmGrid> algorithm_grids(cublasComputeType_t compute) {
  constexpr int kMaxIds = 64;
  const cublasLtHandle_t lt = at::cuda::getCurrentCUDABlasLtHandle();
  int ids[kMaxIds], count = 0;
  if (cublasLtMatmulAlgoGetIds(lt, compute, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                               CUDA_R_32F, kMaxIds, ids, &count) != CUBLAS_STATUS_SUCCESS) {
    return {};
  }
  std::vector<AlgorithmGrid> grids;
  for (int i = 0; i < count; ++i) {
    AlgorithmGrid grid;
    if (cublasLtMatmulAlgoInit(lt, compute, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                               CUDA_R_32F, ids[i], &grid.algo) != CUBLAS_STATUS_SUCCESS) {
      continue;
    }
    grid.tiles = capability_ids(grid.algo, CUBLASLT_ALGO_CAP_TILE_IDS);
    if (grid.tiles.empty()) grid.tiles = {CUBLASLT_MATMUL_TILE_UNDEFINED};
    grid.stages = capability_ids(grid.algo, CUBLASLT_ALGO_CAP_STAGES_IDS);
    grid.stages.insert(grid.stages.begin(), CUBLASLT_MATMUL_STAGES_UNDEFINED);
    grids.push_back(std::move(grid));
  }
  return grids;
}

// The (algorithm, tile) configurations cuBLASLt accepts for this product that are not among
// `found` yet, each at the first of its stages it accepts, kEnumerated at most (a bound on the
// brief timing's work): its heuristic ranks a few configurations of a few algorithms, and the
// best it offered the stacked round's K = 128 products ran at 39–45 TFLOP/s (H200, 2026-11-28).
// (The autotuners of FasterTransformer and TensorRT search cuBLASLt so.) Taken round by round,
// each algorithm's next tile in turn, so that were the bound reached the candidates would still
// spread over every algorithm; at most kChecks configurations are put to cuBLASLt's check, so that
// one refusing most of its grid for a shape still lists its candidates in bounded time.
void add_enumerated(const Product& p, std::vector<cublasLtMatmulHeuristicResult_t>& found) {
  constexpr size_t kEnumerated = 256, kChecks = 4096;
  // An epilogue's vector has no least alignment among an algorithm's capabilities (accepts()
  // checks the operands'): configurations set by hand only where it is as aligned as a vectorized
  // read of it needs; elsewhere the heuristic's candidates alone, chosen knowing the operands.
  constexpr uint32_t kVectorAlignment = 16;
  if (p.vector_alignment() < kVectorAlignment) return;
  const std::vector<AlgorithmGrid> grids = algorithm_grids(p.operation.compute);
  const auto known = [&](const cublasLtMatmulAlgo_t& algo) {
    return std::any_of(found.begin(), found.end(), [&](const auto& f) {
      return std::memcmp(f.algo.data, algo.data, sizeof algo.data) == 0;
    });
  };
  size_t added = 0, checked = 0;
  for (size_t round = 0;; ++round) {
    bool any_left = false;
    for (const AlgorithmGrid& grid : grids) {
      if (round >= grid.tiles.size()) continue;
      any_left = true;
      for (const uint32_t stages : grid.stages) {
        if (added >= kEnumerated || checked++ >= kChecks) return;
        cublasLtMatmulHeuristicResult_t variant = configured(grid.algo, grid.tiles[round], stages);
        if (!p.accepts(variant)) continue;
        if (!known(variant.algo)) found.push_back(variant), ++added;
        break;
      }
    }
    if (!any_left) return;
  }
}

}  // namespace

std::string describe(const cublasLtMatmulAlgo_t& algo) {
  int32_t id = 0, split = 1;
  uint32_t tile = 0, stages = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, nullptr);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile,
                                       nullptr);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof split,
                                       nullptr);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                       sizeof stages, nullptr);
  uint32_t scheme = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme,
                                       sizeof scheme, nullptr);
  char buf[128];
  std::snprintf(buf, sizeof buf, "algorithm %d, tile %u, stages %u, split-K %d%s", id, tile, stages,
                split,
                split <= 1                                    ? ""
                : scheme == CUBLASLT_REDUCTION_SCHEME_INPLACE ? " (in place)"
                                                              : " (reduced apart)");
  return buf;
}

std::vector<cublasLtMatmulHeuristicResult_t> candidates(const Product& p, bool wide) {
  const Preference preference(p.workspace_bytes, p.alignments());
  constexpr int kHeuristics = 16;  // the heuristic's first, as it ranks them
  std::vector<cublasLtMatmulHeuristicResult_t> found(kHeuristics);
  int count = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      at::cuda::getCurrentCUDABlasLtHandle(), p.operation.handle, p.first_layout.handle,
      p.second_layout.handle, p.out_layout.handle, p.out_layout.handle, preference.handle,
      kHeuristics, found.data(), &count);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) return {};  // none: LibTorch's path alone
  check(status, "cuBLASLt's candidates");
  found.resize(count);
  if (!wide) return found;
  add_split_k_variants(p, found);
  add_enumerated(p, found);
  return found;
}

}  // namespace minrnn::core::cublaslt
