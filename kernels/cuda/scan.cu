// CUDA scan kernels: the phase programs of kernels/cuda/scan_per_channel.h and scan_tiled.h (put
// together in scan_programs.h, run on the host by tests/kernels/grid_emulator.h) under a thin
// __global__ wrapper, plus the launchers. The element math (how a_t, b_t are formed and how
// gradients flow back into the inputs) is scan_math.h, shared with the CPU kernels.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <atomic>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/scan.h"

namespace minrnn::core::kernels {
namespace {

using grid::Boundary;
using grid::ScanKernel;

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

template <typename T, typename A>
struct ScanForward {
  static cudaError_t run(Shape s, const ScanForwardArgs& x, cudaStream_t stream) {
    cudaError_t err = cudaSuccess;
    const ScanKernel kind = resolve_scan_kernel(s, x.kernel);
    scan_math::with_coefficients<T, A>(
        x.source, static_cast<const T*>(x.first), static_cast<const T*>(x.second), x.stride,
        s.channels, [&](auto coef) {
          grid::with_forward_kernel<T, A, grid::DeviceMemory>(
              kind, s.batch, s.length, s.channels, coef, static_cast<const T*>(x.h0),
              static_cast<T*>(x.h), static_cast<T*>(x.h_last), Launch{stream, &err});
        });
    return err;
  }
};

template <typename T, typename A>
struct ScanBackward {
  static cudaError_t run(Shape s, const ScanBackwardArgs& x, cudaStream_t stream) {
    cudaError_t err = cudaSuccess;
    const ScanKernel kind = resolve_scan_kernel(s, x.kernel);
    scan_math::with_coefficients<T, A>(
        x.source, static_cast<const T*>(x.first), static_cast<const T*>(x.second), x.stride,
        s.channels, [&](auto coef) {
          grid::with_backward_kernel<T, A, grid::DeviceMemory>(
              kind, s.batch, s.length, s.channels, coef, static_cast<const T*>(x.h),
              static_cast<const T*>(x.h0), static_cast<const T*>(x.grad_h),
              static_cast<const T*>(x.grad_last), static_cast<T*>(x.d_first),
              static_cast<T*>(x.d_second), static_cast<T*>(x.dh0), Launch{stream, &err});
        });
    return err;
  }
};

template <typename T>
grid::Planes<const T*> in(const ComplexPlanes& p) {
  return {static_cast<const T*>(p.re), static_cast<const T*>(p.im)};
}
template <typename T>
grid::Planes<T*> out(const MutableComplexPlanes& p) {
  return {static_cast<T*>(p.re), static_cast<T*>(p.im)};
}

template <typename T, typename A>
struct ComplexForward {
  static cudaError_t run(Shape s, const ComplexForwardArgs& x, cudaStream_t stream) {
    cudaError_t err = cudaSuccess;
    Launch{stream,
           &err}(grid::ComplexForward<T, A, grid::DeviceMemory>{{s.batch, s.length, s.channels},
                                                                in<T>(x.a),
                                                                in<T>(x.b),
                                                                in<T>(x.h0),
                                                                out<T>(x.h),
                                                                out<T>(x.h_last)});
    return err;
  }
};
template <typename T, typename A>
struct ComplexBackward {
  static cudaError_t run(Shape s, const ComplexBackwardArgs& x, cudaStream_t stream) {
    cudaError_t err = cudaSuccess;
    Launch{stream,
           &err}(grid::ComplexBackward<T, A, grid::DeviceMemory>{{s.batch, s.length, s.channels},
                                                                 in<T>(x.a),
                                                                 in<T>(x.h),
                                                                 in<T>(x.h0),
                                                                 in<T>(x.grad_h),
                                                                 in<T>(x.grad_last),
                                                                 out<T>(x.da),
                                                                 out<T>(x.db),
                                                                 out<T>(x.dh0)});
    return err;
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

// SM count × resident threads per SM of each device, asked once.
grid::ScanKernel resolve_scan_kernel(Shape shape, grid::ScanKernel requested) {
  if (requested != ScanKernel::kAuto) return requested;
  constexpr int kMaxDevices = 64;
  static std::atomic<int64_t> resident[kMaxDevices] = {};
  int device = 0;
  int64_t threads = 0;
  if (cudaGetDevice(&device) == cudaSuccess && device < kMaxDevices) {
    threads = resident[device].load(std::memory_order_relaxed);
    if (threads == 0) {
      int sms = 0, per_sm = 0;
      if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
          cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device) ==
              cudaSuccess) {
        threads = int64_t(sms) * per_sm;
        resident[device].store(threads, std::memory_order_relaxed);
      }
    }
  }
  if (threads == 0) threads = 132 * 2048;  // an H100, where the device cannot be asked
  return grid::choose_scan_kernel(shape.batch, shape.length, shape.channels, threads);
}

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
