// The training path's matrix products over tall activations, on the CPU in float32: a Linear's
// forward y = x · Wᵀ (+ b) and its input gradient dx = dy · W, for rows ≫ width (a batch of
// B·3K tokens through a 128–512-wide layer).
//
// Why not the BLAS: MKL's sgemm spends ~15% of a training step packing the tall operand (rows ×
// 128, read once per product, so packing is a full extra pass) and scaling C by β = 0 before it
// accumulates. Here only the weight is packed (small, into 16-wide column panels), the activation
// rows are read in place by a 6 × 16 register-tile kernel (AVX2 + FMA), and the bias is where the
// accumulators start. 10–30% faster than MKL at these shapes on an AVX2 Zen 3, a minLSTM
// training step 8.5% (docs/benchmarks.md, seventh sitting). Weight gradients (dyᵀ · x, a reduction
// over the tall dimension) stay with the BLAS, which does those as well as this would.
//
// Each output element is one thread's sum in a fixed order: the same bits at any thread count.
// Used where gemm_cpu_enabled(); AVX-512 machines keep the BLAS (its kernels are twice as wide).
#pragma once
#include <torch/torch.h>

namespace minrnn::core {

// Whether this CPU can run the kernel (AVX2 + FMA, which AVX-512 CPUs have too).
bool gemm_cpu_supported();
// Whether it does: supported and no AVX-512F (there the BLAS's wider kernels win), unless
// MINRNN_NO_GEMM_CPU=1 turns it off or choose_gemm_cpu overrides the choice.
bool gemm_cpu_enabled();
// Overrides gemm_cpu_enabled() for this process (tests and benchmarks measure the kernel on
// machines that would not use it): kOn runs it wherever it is supported, kOff never, kDefault
// restores the machine's choice.
enum class GemmCpuChoice { kDefault, kOn, kOff };
void choose_gemm_cpu(GemmCpuChoice choice);

// Whether both products of a Linear with input x (…, k) and weight w (n, k) run on the kernel:
// enabled, CPU float32, n and k multiples of 16 (ops/affine.h asks before taking its own op).
bool gemm_cpu_fits_linear(const torch::Tensor& x, const torch::Tensor& w);

// x (rows, k) · wᵀ (w: (n, k)) + bias (n; undefined = none) → (rows, n), or undefined when the
// kernel does not take these tensors (not enabled, not CPU float32 contiguous 2-D, n % 16 ≠ 0).
torch::Tensor gemm_cpu_linear(const torch::Tensor& x, const torch::Tensor& w,
                              const torch::Tensor& bias);
// dy (rows, n) · w (w: (n, k)) → (rows, k), or undefined as above (k % 16 ≠ 0).
torch::Tensor gemm_cpu_input_grad(const torch::Tensor& dy, const torch::Tensor& w);

// The same products on 2-D rows: by the kernel where it takes them, else by LibTorch (addmm/mm).
torch::Tensor linear_rows(const torch::Tensor& x, const torch::Tensor& w,
                          const torch::Tensor& bias);
torch::Tensor input_grad_rows(const torch::Tensor& dy, const torch::Tensor& w);

}  // namespace minrnn::core
