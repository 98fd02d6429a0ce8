// How a row-major batched product C = A · B (torch's bmm, each operand any stride pattern a
// row-major matrix or the transpose of one has) reads as cuBLAS's column-major one: C's column-
// major self is Cᵀ = Bᵀ · Aᵀ, so cuBLAS's first operand is B, its second A, and each is asked for
// as the transpose of what torch holds. Plain integers, no CUDA: the CPU tests replay a
// description with a column-major loop against torch's product (tests/ops/tuned_gemm_test.cpp).
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>

namespace minrnn::core {

// One operand as cuBLAS stores it: `transposed` (cuBLAS's op T) is taken of a (rows, cols)
// column-major matrix with leading dimension `ld`; batch i starts batch_stride elements on.
struct ColumnMajorOperand {
  bool transposed = false;
  int64_t rows = 0, cols = 0, ld = 0, batch_stride = 0;
};

// X (r, c), elements row_stride and col_stride apart, as the column-major operand whose op
// gives Xᵀ (c, r): X's rows contiguous (col_stride 1) are already Xᵀ by columns (op N); its
// columns contiguous (row_stride 1) are X itself by columns (op T). Neither: nothing (the caller
// copies X contiguous first).
inline std::optional<ColumnMajorOperand> as_column_major_transpose(int64_t r, int64_t c,
                                                                   int64_t row_stride,
                                                                   int64_t col_stride,
                                                                   int64_t batch_stride) {
  // A dimension of size 1 has any stride: its ld need only be legal (≥ the stored rows, ≥ 1).
  if (col_stride == 1 || c == 1) {
    return ColumnMajorOperand{false, c, r, std::max<int64_t>({row_stride, c, 1}), batch_stride};
  }
  if (row_stride == 1 || r == 1) {
    return ColumnMajorOperand{true, r, c, std::max<int64_t>({col_stride, r, 1}), batch_stride};
  }
  return std::nullopt;
}

// C (batch, m, n) = A (batch, m, k) · B (batch, k, n) with C contiguous, as cuBLAS's
// D (m', n') = op(first) · op(second): m' = n, n' = m, first from B, second from A, D = Cᵀ.
struct ColumnMajorProduct {
  int64_t batch = 0, m = 0, n = 0, k = 0;
  ColumnMajorOperand first, second, out;
};

// Strides are in elements, {batch, row, column} of each operand. Nothing where an operand is
// neither a row-major matrix nor the transpose of one.
inline std::optional<ColumnMajorProduct> column_major_product(int64_t batch, int64_t m, int64_t n,
                                                              int64_t k, const int64_t a_strides[3],
                                                              const int64_t b_strides[3]) {
  const auto first = as_column_major_transpose(k, n, b_strides[1], b_strides[2], b_strides[0]);
  const auto second = as_column_major_transpose(m, k, a_strides[1], a_strides[2], a_strides[0]);
  if (!first || !second) return std::nullopt;
  const ColumnMajorOperand out{false, n, m, std::max<int64_t>(n, 1), m * n};
  return ColumnMajorProduct{batch, n, m, k, *first, *second, out};
}

}  // namespace minrnn::core
