// Host side of the CUDA scans: tensors in, kernel launches (kernels/cuda/scan.cu) out, on the
// current stream of the tensors' device. Same contracts as the CPU raw kernels (scan_cpu.h);
// autograd lives in scan.cpp and scan_complex.cpp. Only compiled with MINRNN_WITH_CUDA.
#pragma once
#include <torch/torch.h>

#include "kernels/cuda/scan_programs.h"
#include "kernels/math/scan_math.h"

namespace minrnn::core {

// Which kernel the real scans below run (process-wide): kAuto, chosen by shape and device (the
// default), or one named — for the GPU tests, which run each, and `minrnn bench scan`. It starts
// as MINRNN_SCAN_KERNEL names it (auto, simple, tiled8, tiled32; the first scan throws
// std::invalid_argument for another value).
void set_cuda_scan_kernel(grid::ScanKernel kernel);
grid::ScanKernel cuda_scan_kernel();

// float32, float64, bfloat16, float16 (accumulating in float32, float64 for float64).
void scan_forward_cuda(CoefficientForm source, const torch::Tensor& first,
                       const torch::Tensor& second, const torch::Tensor& h0, torch::Tensor& h,
                       torch::Tensor& h_last);
void scan_backward_cuda(CoefficientForm source, const torch::Tensor& first,
                        const torch::Tensor& second, const torch::Tensor& h,
                        const torch::Tensor& h0, const torch::Tensor& grad_h,
                        const torch::Tensor& grad_last, torch::Tensor& d_first,
                        torch::Tensor& d_second, torch::Tensor& dh0);

// The complex scan on (re, im) pairs of contiguous tensors; same dtypes as above.
struct ComplexPair {
  torch::Tensor re, im;
};
void complex_scan_forward_cuda(const ComplexPair& a, const ComplexPair& b, const ComplexPair& h0,
                               ComplexPair& h, ComplexPair& h_last);
void complex_scan_backward_cuda(const ComplexPair& a, const ComplexPair& h, const ComplexPair& h0,
                                const ComplexPair& grad_h, const ComplexPair& grad_last,
                                ComplexPair& da, ComplexPair& db, ComplexPair& dh0);

}  // namespace minrnn::core
