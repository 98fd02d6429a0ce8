// cuBLASLt's descriptors of one batched product, as ops/tuned_gemm_cuda.cpp builds, times and
// runs it: plain owners of cuBLASLt's handles (each made in its constructor, destroyed in its
// destructor), and the product with its operands and workspace. Built only with CUDA.
#pragma once
#include <ATen/cuda/CUDAContext.h>
#include <cublasLt.h>

#include <cstdint>
#include <stdexcept>
#include <string>
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

// One attribute of a descriptor set by cuBLASLt's setter for its kind (checked).
template <typename Setter, typename Handle, typename Attribute, typename T>
void set_attribute(Setter setter, Handle handle, Attribute attribute, const T& value) {
  check(setter(handle, attribute, &value, sizeof value), "a descriptor's attribute");
}

struct Layout {
  cublasLtMatrixLayout_t handle = nullptr;
  Layout(const ColumnMajorOperand& o, int64_t batch) {
    check(cublasLtMatrixLayoutCreate(&handle, CUDA_R_32F, o.rows, o.cols, o.ld), "a layout");
    set_attribute(cublasLtMatrixLayoutSetAttribute, handle, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                  static_cast<int32_t>(batch));
    set_attribute(cublasLtMatrixLayoutSetAttribute, handle,
                  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, o.batch_stride);
  }
  ~Layout() { cublasLtMatrixLayoutDestroy(handle); }
  Layout(const Layout&) = delete;
  Layout& operator=(const Layout&) = delete;
};

struct Operation {
  cublasLtMatmulDesc_t handle = nullptr;
  cublasComputeType_t compute;
  Operation(const ColumnMajorProduct& p, bool tf32, const float* bias)
      : compute(tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F) {
    check(cublasLtMatmulDescCreate(&handle, compute, CUDA_R_32F), "the product's descriptor");
    set(CUBLASLT_MATMUL_DESC_TRANSA, p.first.transposed ? CUBLAS_OP_T : CUBLAS_OP_N);
    set(CUBLASLT_MATMUL_DESC_TRANSB, p.second.transposed ? CUBLAS_OP_T : CUBLAS_OP_N);
    if (bias == nullptr) return;
    set(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
    set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias));
    set(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, static_cast<int64_t>(p.m));
  }
  template <typename T>
  void set(cublasLtMatmulDescAttributes_t attribute, const T& value) {
    set_attribute(cublasLtMatmulDescSetAttribute, handle, attribute, value);
  }
  ~Operation() { cublasLtMatmulDescDestroy(handle); }
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;
};

struct Preference {
  cublasLtMatmulPreference_t handle = nullptr;
  Preference(uint64_t workspace, const uint32_t alignments[3]) {
    check(cublasLtMatmulPreferenceCreate(&handle), "a preference");
    set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace);
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignments[0]);
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignments[1]);
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignments[2]);
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignments[2]);
  }
  template <typename T>
  void set(cublasLtMatmulPreferenceAttributes_t attribute, const T& value) {
    set_attribute(cublasLtMatmulPreferenceSetAttribute, handle, attribute, value);
  }
  ~Preference() { cublasLtMatmulPreferenceDestroy(handle); }
  Preference(const Preference&) = delete;
  Preference& operator=(const Preference&) = delete;
};

// One product with everything it needs; run(algo) queues it on the current stream.
struct Product {
  ColumnMajorProduct shape;
  const float *first, *second;
  float* out;
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
};

// cuBLASLt's candidates for the product: its heuristic's (kTunedGemmCandidates at most), split-K
// variants of its first three, and the (algorithm, tile, stages) configurations it has beyond
// them; none where it has no algorithm for it (cublaslt_candidates_cuda.cpp).
std::vector<cublasLtMatmulHeuristicResult_t> candidates(const Product& p,
                                                        const Preference& preference);

}  // namespace minrnn::core::cublaslt
