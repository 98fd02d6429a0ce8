// The register tiles of the CPU GEMM the decision model's Linears run on (ops/gemm_cpu.h says why
// it beats the BLAS at these shapes): B packed once into panels of 16 columns, then C's rows in
// blocks, 6 rows × 16 columns of accumulators a tile (AVX2 + FMA), each output element one sum in
// a fixed order. Plain row-major pointers; the op splits the panels and the row blocks over
// threads.
#pragma once
#include <cstdint>

namespace minrnn::core::cpu {

constexpr int64_t kGemmPanel = 16;      // columns of a packed panel: n a multiple of it
constexpr int64_t kGemmBlockRows = 96;  // rows of one task: their tiles' rows of a stay in L1/L2

// Whether this CPU runs the tiles (AVX2 and FMA; false on another ISA).
bool gemm_tiles_supported();

// Panels [p0, p1) of B (depth × n, element (d, j) at b[d · sd + j · sj]) into `out`, panel p at
// out + p · depth · 16, each (depth, 16) row-major: the kernel reads a step's 16 columns as two
// contiguous vectors.
void pack_gemm_panels(const float* b, int64_t depth, int64_t sd, int64_t sj, int64_t p0, int64_t p1,
                      float* out);

// Rows [r0, r1) of c (m × n) = [bias (n) +] a (m × depth) · B, B as pack_gemm_panels packed it;
// a, c row-major and contiguous. Needs gemm_tiles_supported().
void gemm_packed_rows(int64_t r0, int64_t r1, int64_t n, int64_t depth, const float* a,
                      const float* panels, const float* bias, float* c);

}  // namespace minrnn::core::cpu
