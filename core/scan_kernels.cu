// CUDA scan kernels. One thread owns one (batch, channel) pair and walks time; neighbouring threads
// own neighbouring channels, so every load and store along D is coalesced. The element math (how
// a_t, b_t are formed and how gradients flow back into the inputs) is scan_math.h, shared with the
// CPU kernels.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/scan_kernels.h"

namespace minrnn::core::kernels {
namespace {

// 16-bit storage types converting through float with explicit intrinsics, independent of the
// __CUDA_NO_*_CONVERSIONS__ macros some builds (PyTorch's among them) define.
struct Bf16 {
  __nv_bfloat16 v;
  __host__ __device__ Bf16(float f) : v(__float2bfloat16(f)) {}
  __host__ __device__ operator float() const { return __bfloat162float(v); }
};
struct Half {
  __half v;
  __host__ __device__ Half(float f) : v(__float2half(f)) {}
  __host__ __device__ operator float() const { return __half2float(v); }
};
static_assert(sizeof(Bf16) == 2 && sizeof(Half) == 2, "16-bit storage types must stay 16-bit");

constexpr int kThreads = 256;

// Every kernel: one thread per (batch row, channel) of the B·D channels. Sets the channel and the
// offset of its t = 0 element in a (B, T, D) tensor; false for the threads past the end.
__device__ __forceinline__ bool locate_channel(int64_t B, int64_t L, int64_t D, int64_t& channel,
                                               int64_t& base) {
  channel = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (channel >= B * D) return false;
  base = (channel / D) * L * D + channel % D;
  return true;
}

// Launches `kernel` over the shape's B·D channels; nothing to do for an empty batch.
template <typename... Params, typename... Args>
cudaError_t launch_per_channel(void (*kernel)(Params...), Shape s, cudaStream_t stream,
                               Args... args) {
  const int64_t channels = s.batch * s.channels;
  if (channels == 0) return cudaSuccess;
  const auto blocks = static_cast<unsigned>((channels + kThreads - 1) / kThreads);
  kernel<<<blocks, kThreads, 0, stream>>>(args..., s.batch, s.length, s.channels);
  return cudaGetLastError();
}

template <typename T, typename A, typename Coef>
__global__ void scan_forward_kernel(Coef coef, const T* __restrict__ h0, T* __restrict__ h,
                                    T* __restrict__ h_last, int64_t B, int64_t L, int64_t D) {
  int64_t channel, base;
  if (!locate_channel(B, L, D, channel, base)) return;
  A state = static_cast<A>(h0[channel]);
  for (int64_t t = 0; t < L; ++t) {
    const int64_t i = base + t * D;
    A a_t, b_t;
    coef.load(i, a_t, b_t);
    state = a_t * state + b_t;
    h[i] = static_cast<T>(state);
  }
  h_last[channel] = static_cast<T>(state);
}

// Reverse scan with the gates shifted by one step: g_t = grad_h_t + a_{t+1} g_{t+1}.
template <typename T, typename A, typename Coef>
__global__ void scan_backward_kernel(Coef coef, const T* __restrict__ h, const T* __restrict__ h0,
                                     const T* __restrict__ grad_h, const T* __restrict__ grad_last,
                                     T* __restrict__ d_first, T* __restrict__ d_second,
                                     T* __restrict__ dh0, int64_t B, int64_t L, int64_t D) {
  int64_t channel, base;
  if (!locate_channel(B, L, D, channel, base)) return;
  A carry = static_cast<A>(grad_last[channel]);
  for (int64_t t = L - 1; t >= 0; --t) {
    const int64_t i = base + t * D;
    const A g = static_cast<A>(grad_h[i]) + carry;
    const A h_prev = t > 0 ? static_cast<A>(h[i - D]) : static_cast<A>(h0[channel]);
    carry = coef.backward(i, g, h_prev, d_first, d_second) * g;
  }
  dh0[channel] = static_cast<T>(carry);
}

template <typename T, typename A>
struct ScanForward {
  static cudaError_t run(Shape s, const ScanForwardArgs& x, cudaStream_t stream) {
    cudaError_t err = cudaSuccess;
    scan_math::with_coefficients<T, A>(
        x.source, static_cast<const T*>(x.first), static_cast<const T*>(x.second), [&](auto coef) {
          err = launch_per_channel(scan_forward_kernel<T, A, decltype(coef)>, s, stream, coef,
                                   static_cast<const T*>(x.h0), static_cast<T*>(x.h),
                                   static_cast<T*>(x.h_last));
        });
    return err;
  }
};

template <typename T, typename A>
struct ScanBackward {
  static cudaError_t run(Shape s, const ScanBackwardArgs& x, cudaStream_t stream) {
    cudaError_t err = cudaSuccess;
    scan_math::with_coefficients<T, A>(
        x.source, static_cast<const T*>(x.first), static_cast<const T*>(x.second), [&](auto coef) {
          err = launch_per_channel(scan_backward_kernel<T, A, decltype(coef)>, s, stream, coef,
                                   static_cast<const T*>(x.h), static_cast<const T*>(x.h0),
                                   static_cast<const T*>(x.grad_h),
                                   static_cast<const T*>(x.grad_last), static_cast<T*>(x.d_first),
                                   static_cast<T*>(x.d_second), static_cast<T*>(x.dh0));
        });
    return err;
  }
};

// Complex recurrence h_t = a_t h_{t−1} + b_t on (re, im) planes, accumulated in A; the backward
// carries conj(a_{t+1}) g_{t+1} and writes ∇b_t = g_t, ∇a_t = g_t conj(h_{t−1}) (see
// scan_complex.cpp).
template <typename T, typename A>
__global__ void complex_forward_kernel(ComplexForwardArgs x, int64_t B, int64_t L, int64_t D) {
  int64_t channel, base;
  if (!locate_channel(B, L, D, channel, base)) return;
  auto in = [](const void* p, int64_t i) { return static_cast<A>(static_cast<const T*>(p)[i]); };
  auto out = [](void* p, int64_t i, A v) { static_cast<T*>(p)[i] = static_cast<T>(v); };
  A hr = in(x.h0.re, channel), hi = in(x.h0.im, channel);
  for (int64_t t = 0; t < L; ++t) {
    const int64_t i = base + t * D;
    const A ar = in(x.a.re, i), ai = in(x.a.im, i);
    const A next_re = ar * hr - ai * hi + in(x.b.re, i);
    hi = ar * hi + ai * hr + in(x.b.im, i);
    hr = next_re;
    out(x.h.re, i, hr);
    out(x.h.im, i, hi);
  }
  out(x.h_last.re, channel, hr);
  out(x.h_last.im, channel, hi);
}

template <typename T, typename A>
__global__ void complex_backward_kernel(ComplexBackwardArgs x, int64_t B, int64_t L, int64_t D) {
  int64_t channel, base;
  if (!locate_channel(B, L, D, channel, base)) return;
  auto in = [](const void* p, int64_t i) { return static_cast<A>(static_cast<const T*>(p)[i]); };
  auto out = [](void* p, int64_t i, A v) { static_cast<T*>(p)[i] = static_cast<T>(v); };
  A cr = in(x.grad_last.re, channel), ci = in(x.grad_last.im, channel);
  for (int64_t t = L - 1; t >= 0; --t) {
    const int64_t i = base + t * D;
    const A gr = in(x.grad_h.re, i) + cr, gi = in(x.grad_h.im, i) + ci;
    const A pr = t > 0 ? in(x.h.re, i - D) : in(x.h0.re, channel);
    const A pi = t > 0 ? in(x.h.im, i - D) : in(x.h0.im, channel);
    out(x.db.re, i, gr);
    out(x.db.im, i, gi);
    out(x.da.re, i, gr * pr + gi * pi);
    out(x.da.im, i, gi * pr - gr * pi);
    const A ar = in(x.a.re, i), ai = in(x.a.im, i);
    cr = ar * gr + ai * gi;
    ci = ar * gi - ai * gr;
  }
  out(x.dh0.re, channel, cr);
  out(x.dh0.im, channel, ci);
}

template <typename T, typename A>
struct ComplexForward {
  static cudaError_t run(Shape s, const ComplexForwardArgs& x, cudaStream_t stream) {
    return launch_per_channel(complex_forward_kernel<T, A>, s, stream, x);
  }
};
template <typename T, typename A>
struct ComplexBackward {
  static cudaError_t run(Shape s, const ComplexBackwardArgs& x, cudaStream_t stream) {
    return launch_per_channel(complex_backward_kernel<T, A>, s, stream, x);
  }
};

// Runs Op<storage, accumulation>::run for the dtype.
template <template <typename, typename> class Op, typename Args>
cudaError_t dispatch_dtype(Dtype dtype, Shape shape, const Args& args, cudaStream_t stream) {
  switch (dtype) {
    case Dtype::kFloat32:
      return Op<float, float>::run(shape, args, stream);
    case Dtype::kFloat64:
      return Op<double, double>::run(shape, args, stream);
    case Dtype::kBFloat16:
      return Op<Bf16, float>::run(shape, args, stream);
    case Dtype::kFloat16:
      return Op<Half, float>::run(shape, args, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t scan_forward(Dtype dtype, Shape shape, const ScanForwardArgs& args,
                         cudaStream_t stream) {
  return dispatch_dtype<ScanForward>(dtype, shape, args, stream);
}

cudaError_t scan_backward(Dtype dtype, Shape shape, const ScanBackwardArgs& args,
                          cudaStream_t stream) {
  return dispatch_dtype<ScanBackward>(dtype, shape, args, stream);
}

cudaError_t complex_scan_forward(Dtype dtype, Shape shape, const ComplexForwardArgs& args,
                                 cudaStream_t stream) {
  return dispatch_dtype<ComplexForward>(dtype, shape, args, stream);
}

cudaError_t complex_scan_backward(Dtype dtype, Shape shape, const ComplexBackwardArgs& args,
                                  cudaStream_t stream) {
  return dispatch_dtype<ComplexBackward>(dtype, shape, args, stream);
}

}  // namespace minrnn::core::kernels
