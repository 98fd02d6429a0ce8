// cuBLASLt's descriptors of one batched product, as ops/tuned_gemm_cuda.cpp builds, times and
// runs it: plain owners of cuBLASLt's handles (each made in its constructor, destroyed in its
// destructor), and the product with its operands and workspace. Built only with CUDA.
#pragma once
#include <ATen/cuda/CUDAContext.h>
#include <cublasLt.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ops/gemm_layout.h"

namespace minrnn::core::cublaslt {

inline void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("tuned_bmm: ") + what + ": " +
                             cublasLtGetStatusString(status));
  }
}

// The largest power of two up to 256 that divides every address a run's operand starts at:
// cuBLASLt's algorithms each need a minimum alignment, and its heuristic assumes 256 unless told.
inline uint32_t alignment_of(const void* data, int64_t batch_stride, int64_t batch) {
  uint64_t bits = reinterpret_cast<uintptr_t>(data);
  if (batch > 1) bits |= static_cast<uint64_t>(batch_stride) * sizeof(float);
  uint32_t alignment = 1;
  while (alignment < 256 && bits % (2 * alignment) == 0) alignment *= 2;
  return alignment;
}

// A cuBLASLt descriptor of one kind, owned: its handle made by the derived constructor, destroyed
// with it; set() checks each attribute it gives.
template <typename Handle, cublasStatus_t (*Destroy)(Handle), typename Attribute,
          cublasStatus_t (*Setter)(Handle, Attribute, const void*, size_t)>
struct Descriptor {
  Handle handle = nullptr;
  Descriptor() = default;
  ~Descriptor() { Destroy(handle); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  template <typename T>
  void set(Attribute attribute, const T& value) {
    check(Setter(handle, attribute, &value, sizeof value), "a descriptor's attribute");
  }
};

struct Layout : Descriptor<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy,
                           cublasLtMatrixLayoutAttribute_t, cublasLtMatrixLayoutSetAttribute> {
  Layout(const ColumnMajorOperand& o, int64_t batch) {
    check(cublasLtMatrixLayoutCreate(&handle, CUDA_R_32F, o.rows, o.cols, o.ld), "a layout");
    set(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, static_cast<int32_t>(batch));
    set(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, o.batch_stride);
  }
};

// What a product C = a · b does with its vector (a run's row of it each): nothing; adds it to
// each of C's rows (cuBLASLt's BIAS: an entry for each of D's rows); or writes a's sums over k
// there, one for each of a's rows — a weight's gradient dyᵀ · rows with its bias's, dy's column
// sums, in the product's own pass (BGRADB: D's second operand, a, reduced over k for each of D's
// columns). The values are the choices' keys' (tuned_gemm_cuda.cpp): kept in files, never
// renumbered.
enum class VectorUse : int64_t { kNone = 0, kBias = 1, kSumsOfA = 2 };

// How far apart a product's runs' vectors are: a bias has an entry for each of D's rows (m), a's
// sums one for each of D's columns (n).
inline int64_t vector_batch_stride(const ColumnMajorProduct& p, VectorUse use) {
  return use == VectorUse::kBias ? p.m : p.n;
}

struct Operation : Descriptor<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy,
                              cublasLtMatmulDescAttributes_t, cublasLtMatmulDescSetAttribute> {
  cublasComputeType_t compute;
  Operation(const ColumnMajorProduct& p, bool tf32, VectorUse use, const float* vector)
      : compute(tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F) {
    check(cublasLtMatmulDescCreate(&handle, compute, CUDA_R_32F), "the product's descriptor");
    set(CUBLASLT_MATMUL_DESC_TRANSA, p.first.transposed ? CUBLAS_OP_T : CUBLAS_OP_N);
    set(CUBLASLT_MATMUL_DESC_TRANSB, p.second.transposed ? CUBLAS_OP_T : CUBLAS_OP_N);
    if (use == VectorUse::kNone) return;
    const bool bias = use == VectorUse::kBias;
    set(CUBLASLT_MATMUL_DESC_EPILOGUE, bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_BGRADB);
    set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(vector));
    set(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, vector_batch_stride(p, use));
  }
};

struct Preference
    : Descriptor<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy,
                 cublasLtMatmulPreferenceAttributes_t, cublasLtMatmulPreferenceSetAttribute> {
  Preference(uint64_t workspace, const std::array<uint32_t, 3>& alignments) {
    check(cublasLtMatmulPreferenceCreate(&handle), "a preference");
    set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace);
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignments[0]);
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignments[1]);
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignments[2]);
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignments[2]);
  }
};

// One product with everything it needs; run(algo) queues it on the current stream.
struct Product {
  ColumnMajorProduct shape;
  const float *first, *second;
  float* out;
  const float* vector;  // the bias it adds, or the sums it writes; null for neither
  int64_t vector_batch_stride;
  Layout first_layout, second_layout, out_layout;
  Operation operation;
  void* workspace;
  uint64_t workspace_bytes;

  cublasStatus_t run(const cublasLtMatmulAlgo_t& algo) const {
    const float one = 1, zero = 0;
    return cublasLtMatmul(at::cuda::getCurrentCUDABlasLtHandle(), operation.handle, &one, first,
                          first_layout.handle, second, second_layout.handle, &zero, out,
                          out_layout.handle, out, out_layout.handle, &algo, workspace,
                          workspace_bytes, at::cuda::getCurrentCUDAStream());
  }
  // Whether cuBLASLt takes `candidate`'s algorithm for this product within its workspace and its
  // operands' alignments (the candidate's other fields, its workspace size among them, set as
  // cuBLASLt checked it). cuBLASLt's check sees layouts, not addresses: an algorithm's least
  // alignment of each operand is checked here, so that a configuration set by hand (its
  // heuristic weighs the preference's alignments itself) never reads an operand misaligned.
  bool accepts(cublasLtMatmulHeuristicResult_t& candidate) const {
    if (cublasLtMatmulAlgoCheck(at::cuda::getCurrentCUDABlasLtHandle(), operation.handle,
                                first_layout.handle, second_layout.handle, out_layout.handle,
                                out_layout.handle, &candidate.algo,
                                &candidate) != CUBLAS_STATUS_SUCCESS ||
        candidate.workspaceSize > workspace_bytes) {
      return false;
    }
    const std::array<uint32_t, 3> have = alignments();
    const std::pair<cublasLtMatmulAlgoCapAttributes_t, uint32_t> needs[] = {
        {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, have[0]},
        {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES, have[1]},
        {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES, have[2]},
        {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES, have[2]}};
    for (const auto& [attribute, has] : needs) {
      uint32_t need = 256;  // where cuBLASLt does not say: its heuristic's assumption
      cublasLtMatmulAlgoCapGetAttribute(&candidate.algo, attribute, &need, sizeof need, nullptr);
      if (need > has) return false;
    }
    return true;
  }
  // The alignments of its first, second and output operands (alignment_of).
  std::array<uint32_t, 3> alignments() const {
    const int64_t batch = shape.batch;
    return {alignment_of(first, shape.first.batch_stride, batch),
            alignment_of(second, shape.second.batch_stride, batch),
            alignment_of(out, shape.out.batch_stride, batch)};
  }
  // Its vector's alignment (alignment_of), 256 where it has none.
  uint32_t vector_alignment() const {
    return vector ? alignment_of(vector, vector_batch_stride, shape.batch) : 256;
  }
};

// cuBLASLt's candidates for the product: its heuristic's (its first 16 at most, for its
// operands' alignments and workspace), and where `wide` split-K variants of its first three and
// the (algorithm, tile) configurations it accepts beyond them; none where it has no algorithm for
// it (cublaslt_candidates_cuda.cpp).
std::vector<cublasLtMatmulHeuristicResult_t> candidates(const Product& p, bool wide);

// An algorithm in words: its id, tile, stages and split-K (and how the parts are reduced).
std::string describe(const cublasLtMatmulAlgo_t& algo);

}  // namespace minrnn::core::cublaslt
