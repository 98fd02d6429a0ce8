// CUDA linear scan, forward and backward. One thread owns one (batch, channel) pair and walks time;
// neighbouring threads own neighbouring channels, so every load and store along D is coalesced.
// Accumulation is in float32 (float64 for double inputs).
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/torch.h>

#include "core/scan_cuda.h"

namespace minrnn::core {
namespace {

template <typename T>
struct Acc {
  using type = float;
};
template <>
struct Acc<double> {
  using type = double;
};

template <typename T>
__global__ void scan_forward_kernel(const T* __restrict__ a, const T* __restrict__ b,
                                    const T* __restrict__ h0, T* __restrict__ h,
                                    T* __restrict__ h_last, int64_t B, int64_t L, int64_t D) {
  using A = typename Acc<T>::type;
  const int64_t channel = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (channel >= B * D) return;
  const int64_t row = channel / D, d = channel % D;
  const int64_t base = row * L * D + d;
  A state = static_cast<A>(h0[channel]);
  for (int64_t t = 0; t < L; ++t) {
    const int64_t i = base + t * D;
    state = static_cast<A>(a[i]) * state + static_cast<A>(b[i]);
    h[i] = static_cast<T>(state);
  }
  h_last[channel] = static_cast<T>(state);
}

// Reverse scan with gates shifted by one: g_t = grad_h_t + a_{t+1} g_{t+1}; db = g, da = g·h_{t−1}.
template <typename T>
__global__ void scan_backward_kernel(const T* __restrict__ a, const T* __restrict__ h,
                                     const T* __restrict__ h0, const T* __restrict__ grad_h,
                                     const T* __restrict__ grad_last, T* __restrict__ da,
                                     T* __restrict__ db, T* __restrict__ dh0, int64_t B, int64_t L,
                                     int64_t D) {
  using A = typename Acc<T>::type;
  const int64_t channel = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (channel >= B * D) return;
  const int64_t row = channel / D, d = channel % D;
  const int64_t base = row * L * D + d;
  A carry = static_cast<A>(grad_last[channel]);
  for (int64_t t = L - 1; t >= 0; --t) {
    const int64_t i = base + t * D;
    const A g = static_cast<A>(grad_h[i]) + carry;
    const A h_prev = t > 0 ? static_cast<A>(h[i - D]) : static_cast<A>(h0[channel]);
    db[i] = static_cast<T>(g);
    da[i] = static_cast<T>(g * h_prev);
    carry = static_cast<A>(a[i]) * g;
  }
  dh0[channel] = static_cast<T>(carry);
}

constexpr int kThreads = 256;

unsigned blocks_for(int64_t channels) {
  return static_cast<unsigned>((channels + kThreads - 1) / kThreads);
}

class LinearScanCudaFunction : public torch::autograd::Function<LinearScanCudaFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const torch::Tensor& a_in,
                                                const torch::Tensor& b_in,
                                                const torch::Tensor& h0_in) {
    c10::cuda::CUDAGuard guard(a_in.device());
    torch::Tensor a = a_in.contiguous(), b = b_in.contiguous(), h0 = h0_in.contiguous();
    const int64_t B = a.size(0), L = a.size(1), D = a.size(2);
    torch::Tensor h = torch::empty_like(a), h_last = torch::empty_like(h0);
    if (B * D > 0) {
      auto stream = at::cuda::getCurrentCUDAStream();
      AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, a.scalar_type(), "scan_fwd", [&] {
        scan_forward_kernel<scalar_t><<<blocks_for(B * D), kThreads, 0, stream>>>(
            a.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(), h0.data_ptr<scalar_t>(),
            h.data_ptr<scalar_t>(), h_last.data_ptr<scalar_t>(), B, L, D);
      });
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    ctx->save_for_backward({a, h, h0});
    return {h, h_last};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor &a = saved[0], &h = saved[1], &h0 = saved[2];
    c10::cuda::CUDAGuard guard(a.device());
    torch::Tensor grad_h = grads[0].defined() ? grads[0].contiguous() : torch::zeros_like(h);
    torch::Tensor grad_last = grads[1].defined() ? grads[1].contiguous() : torch::zeros_like(h0);
    const int64_t B = a.size(0), L = a.size(1), D = a.size(2);
    torch::Tensor da = torch::empty_like(a), db = torch::empty_like(a), dh0 = torch::empty_like(h0);
    if (B * D > 0) {
      auto stream = at::cuda::getCurrentCUDAStream();
      AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, a.scalar_type(), "scan_bwd", [&] {
        scan_backward_kernel<scalar_t><<<blocks_for(B * D), kThreads, 0, stream>>>(
            a.data_ptr<scalar_t>(), h.data_ptr<scalar_t>(), h0.data_ptr<scalar_t>(),
            grad_h.data_ptr<scalar_t>(), grad_last.data_ptr<scalar_t>(), da.data_ptr<scalar_t>(),
            db.data_ptr<scalar_t>(), dh0.data_ptr<scalar_t>(), B, L, D);
      });
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return {da, db, dh0};
  }
};

}  // namespace

ScanResult linear_scan_cuda(const torch::Tensor& a, const torch::Tensor& b,
                            const torch::Tensor& h0) {
  auto out = LinearScanCudaFunction::apply(a, b, h0);
  return {out[0], out[1]};
}

}  // namespace minrnn::core
