// The CPU complex scan's loops over one slice of channels (HGRN's recurrence h_t = a_t h_{t-1} +
// b_t on real/imaginary planes): one batch row, channels [d0, d1) (at most kSlice of them), all L
// steps, forward and backward. No threads and no tensors here: ops/scan_complex.cpp hands slices
// to torch's threads and unpacks the tensors.
//
// Internal linkage on purpose, as kernels/cpu/scan.h: each loop is built per ISA
// (MINRNN_VECTOR_CLONES), and the one file that includes this header instantiates them.
#pragma once
#include <cstdint>

#include "kernels/cpu/scan.h"
#include "kernels/cpu/simd.h"

namespace minrnn::core::scan_cpu {

// The (re, im) planes of one (B,L,D) or (B,D) complex array.
template <typename T>
struct ComplexPlanes {
  T* re;
  T* im;
};

namespace {

template <typename T>
MINRNN_VECTOR_CLONES void complex_forward_slice(ComplexPlanes<const T> a, ComplexPlanes<const T> b,
                                                ComplexPlanes<const T> h0, ComplexPlanes<T> h,
                                                ComplexPlanes<T> h_last, int64_t row, int64_t d0,
                                                int64_t d1, int64_t L, int64_t D) {
  T s_re[kSlice], s_im[kSlice];
  for (int64_t d = d0; d < d1; ++d) {
    s_re[d - d0] = h0.re[row * D + d];
    s_im[d - d0] = h0.im[row * D + d];
  }
  for (int64_t t = 0; t < L; ++t) {
    const int64_t off = (row * L + t) * D;
#pragma GCC ivdep
    for (int64_t d = d0; d < d1; ++d) {
      const T ar = a.re[off + d], ai = a.im[off + d], hr = s_re[d - d0], hi = s_im[d - d0];
      s_re[d - d0] = ar * hr - ai * hi + b.re[off + d];
      s_im[d - d0] = ar * hi + ai * hr + b.im[off + d];
      h.re[off + d] = s_re[d - d0];
      h.im[off + d] = s_im[d - d0];
    }
  }
  for (int64_t d = d0; d < d1; ++d) {
    h_last.re[row * D + d] = s_re[d - d0];
    h_last.im[row * D + d] = s_im[d - d0];
  }
}

// For a real loss L write ∇z = ∂L/∂Re z + i ∂L/∂Im z. Then for h_t = a_t h_{t-1} + b_t:
//     g_t = ∇h_t (total) = grad_h_t + conj(a_{t+1}) g_{t+1},   g_T includes grad of h_last,
//     ∇b_t = g_t,   ∇a_t = g_t conj(h_{t-1}),   ∇h_0 = conj(a_1) g_1.
template <typename T>
MINRNN_VECTOR_CLONES void complex_backward_slice(ComplexPlanes<const T> a, ComplexPlanes<const T> h,
                                                 ComplexPlanes<const T> h0,
                                                 ComplexPlanes<const T> grad_h,
                                                 ComplexPlanes<const T> grad_last,
                                                 ComplexPlanes<T> da, ComplexPlanes<T> db,
                                                 ComplexPlanes<T> dh0, int64_t row, int64_t d0,
                                                 int64_t d1, int64_t L, int64_t D) {
  T c_re[kSlice], c_im[kSlice];  // conj(a_{t+1}) g_{t+1}
  for (int64_t d = d0; d < d1; ++d) {
    c_re[d - d0] = grad_last.re[row * D + d];
    c_im[d - d0] = grad_last.im[row * D + d];
  }
  for (int64_t t = L - 1; t >= 0; --t) {
    const int64_t off = (row * L + t) * D;
    const T* p_re = t > 0 ? h.re + off - D : h0.re + row * D;
    const T* p_im = t > 0 ? h.im + off - D : h0.im + row * D;
#pragma GCC ivdep
    for (int64_t d = d0; d < d1; ++d) {
      const T gr = grad_h.re[off + d] + c_re[d - d0], gi = grad_h.im[off + d] + c_im[d - d0];
      db.re[off + d] = gr;
      db.im[off + d] = gi;
      da.re[off + d] = gr * p_re[d] + gi * p_im[d];
      da.im[off + d] = gi * p_re[d] - gr * p_im[d];
      const T ar = a.re[off + d], ai = a.im[off + d];
      c_re[d - d0] = ar * gr + ai * gi;
      c_im[d - d0] = ar * gi - ai * gr;
    }
  }
  for (int64_t d = d0; d < d1; ++d) {
    dh0.re[row * D + d] = c_re[d - d0];
    dh0.im[row * D + d] = c_im[d - d0];
  }
}

}  // namespace
}  // namespace minrnn::core::scan_cpu
