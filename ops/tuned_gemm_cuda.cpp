// Host side of the tuned stacked products (tuned_gemm_cuda.h): cuBLASLt's descriptors for one
// product, its candidates timed once a shape, the choice kept for the process.
#include "ops/tuned_gemm_cuda.h"

#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAGuard.h>
#include <cublasLt.h>

#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>

#include "ops/gemm_layout.h"

namespace minrnn::core {
namespace {

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("tuned_bmm: ") + what + ": " +
                             cublasLtGetStatusString(status));
  }
}

// The largest power of two up to 256 that divides every address a run's operand starts at:
// cuBLASLt's algorithms each need a minimum alignment, and its heuristic assumes 256 unless told.
uint32_t alignment_of(const void* data, int64_t batch_stride, int64_t batch) {
  uint64_t bits = reinterpret_cast<uintptr_t>(data);
  if (batch > 1) bits |= static_cast<uint64_t>(batch_stride) * sizeof(float);
  uint32_t alignment = 1;
  while (alignment < 256 && bits % (2 * alignment) == 0) alignment *= 2;
  return alignment;
}

struct Layout {
  cublasLtMatrixLayout_t handle = nullptr;
  Layout(const ColumnMajorOperand& o, int64_t batch) {
    check(cublasLtMatrixLayoutCreate(&handle, CUDA_R_32F, o.rows, o.cols, o.ld), "a layout");
    const int32_t count = static_cast<int32_t>(batch);
    const int64_t stride = o.batch_stride;
    check(cublasLtMatrixLayoutSetAttribute(handle, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                           sizeof count),
          "a layout's batch count");
    check(cublasLtMatrixLayoutSetAttribute(handle, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                           &stride, sizeof stride),
          "a layout's batch stride");
  }
  ~Layout() { cublasLtMatrixLayoutDestroy(handle); }
  Layout(const Layout&) = delete;
  Layout& operator=(const Layout&) = delete;
};

struct Operation {
  cublasLtMatmulDesc_t handle = nullptr;
  Operation(const ColumnMajorProduct& p, bool tf32, const float* bias) {
    check(cublasLtMatmulDescCreate(
              &handle, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "the product's descriptor");
    set(CUBLASLT_MATMUL_DESC_TRANSA, p.first.transposed ? CUBLAS_OP_T : CUBLAS_OP_N);
    set(CUBLASLT_MATMUL_DESC_TRANSB, p.second.transposed ? CUBLAS_OP_T : CUBLAS_OP_N);
    if (bias == nullptr) return;
    set(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
    set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias));
    set(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, static_cast<int64_t>(p.m));
  }
  template <typename T>
  void set(cublasLtMatmulDescAttributes_t attribute, const T& value) {
    check(cublasLtMatmulDescSetAttribute(handle, attribute, &value, sizeof value),
          "a product attribute");
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
    check(cublasLtMatmulPreferenceSetAttribute(handle, attribute, &value, sizeof value),
          "a preference attribute");
  }
  ~Preference() { cublasLtMatmulPreferenceDestroy(handle); }
  Preference(const Preference&) = delete;
  Preference& operator=(const Preference&) = delete;
};

// What a shape's first call chose, and what the choice rested on: one of cuBLASLt's candidates,
// or LibTorch's own path (bmm, then the bias added) where none beat it.
struct Choice {
  cublasLtMatmulAlgo_t algo{};
  bool libtorch = false;
  double us = 0, first_us = 0, libtorch_us = 0;
  int timed = 0;
};

std::mutex choices_mutex;
std::map<std::vector<int64_t>, Choice> choices;  // key(): the shape and everything it ran with
int64_t untuned_in_captures = 0;  // calls inside a capture whose shape had no choice yet

std::vector<int64_t> key(const ColumnMajorProduct& p, int device, bool tf32, bool bias,
                         const uint32_t alignments[3]) {
  std::vector<int64_t> k{device, tf32, bias, p.batch, p.m, p.n, p.k};
  for (const ColumnMajorOperand* o : {&p.first, &p.second}) {
    k.insert(k.end(), {o->transposed, o->rows, o->cols, o->ld, o->batch_stride});
  }
  k.insert(k.end(), alignments, alignments + 3);
  return k;
}

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

std::vector<cublasLtMatmulHeuristicResult_t> candidates(const Product& p,
                                                        const Preference& preference) {
  std::vector<cublasLtMatmulHeuristicResult_t> found(kTunedGemmCandidates);
  int count = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      at::cuda::getCurrentCUDABlasLtHandle(), p.operation.handle, p.first_layout.handle,
      p.second_layout.handle, p.out_layout.handle, p.out_layout.handle, preference.handle,
      kTunedGemmCandidates, found.data(), &count);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) return {};  // none: LibTorch's path alone
  check(status, "cuBLASLt's candidates");
  found.resize(count);
  return found;
}

// µs a call of `run` (a few calls after two to warm up), or infinity where it fails.
double time_us(const std::function<bool()>& run) {
  constexpr int kWarm = 2, kTimed = 5;
  for (int i = 0; i < kWarm; ++i) {
    if (!run()) return std::numeric_limits<double>::infinity();
  }
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  cudaEvent_t start, end;
  C10_CUDA_CHECK(cudaEventCreate(&start));
  C10_CUDA_CHECK(cudaEventCreate(&end));
  C10_CUDA_CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < kTimed; ++i) run();
  C10_CUDA_CHECK(cudaEventRecord(end, stream));
  C10_CUDA_CHECK(cudaEventSynchronize(end));
  float ms = 0;
  C10_CUDA_CHECK(cudaEventElapsedTime(&ms, start, end));
  C10_CUDA_CHECK(cudaEventDestroy(start));
  C10_CUDA_CHECK(cudaEventDestroy(end));
  return 1e3 * ms / kTimed;
}

// The fastest of cuBLASLt's candidates and LibTorch's path, timed with nothing else on the
// device: the tuned product is never slower than the bmm it replaces, as far as timing tells.
Choice tune(const Product& p, const std::vector<cublasLtMatmulHeuristicResult_t>& found,
            const std::function<void()>& libtorch) {
  C10_CUDA_CHECK(cudaDeviceSynchronize());
  Choice best;
  best.libtorch = true;
  best.us = best.libtorch_us = time_us([&] {
    libtorch();
    return true;
  });
  for (size_t i = 0; i < found.size(); ++i) {
    const double us = time_us([&] { return p.run(found[i].algo) == CUBLAS_STATUS_SUCCESS; });
    if (i == 0) best.first_us = us;
    if (us < best.us) best.algo = found[i].algo, best.us = us, best.libtorch = false;
    ++best.timed;
  }
  return best;
}

// Each operand as it is where cuBLAS can read it so, else a contiguous copy.
torch::Tensor readable(const torch::Tensor& t) {
  return as_column_major_transpose(t.size(1), t.size(2), t.stride(1), t.stride(2), t.stride(0))
             ? t
             : t.contiguous();
}

std::string algo_text(const cublasLtMatmulAlgo_t& algo) {
  int32_t id = 0, split = 1;
  uint32_t tile = 0, stages = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, nullptr);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile,
                                       nullptr);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof split,
                                       nullptr);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                       sizeof stages, nullptr);
  char buf[96];
  std::snprintf(buf, sizeof buf, "algorithm %d, tile %u, stages %u, split-K %d", id, tile, stages,
                split);
  return buf;
}

void check_operands(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& bias) {
  const bool shapes_fit =
      a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0) && a.size(2) == b.size(1);
  const auto floats_here = [&](const torch::Tensor& t) {
    return t.is_cuda() && t.scalar_type() == torch::kFloat && t.device() == a.device();
  };
  const bool bias_fits =
      !bias.defined() || (floats_here(bias) && bias.dim() == 2 && bias.size(0) == a.size(0) &&
                          bias.size(1) == b.size(2));
  if (!shapes_fit || !floats_here(a) || !floats_here(b) || !bias_fits) {
    throw std::invalid_argument(
        "tuned_bmm: expected CUDA float32 a (P, m, k), b (P, k, n) and bias (P, n) or none on "
        "one device");
  }
}

// What `compute` needs to write out = a · b (+ bias): the product as cuBLASLt takes it, the
// preference its candidates must meet, the key its choice is kept under, and LibTorch's path.
using ProductCompute =
    std::function<void(const Product&, const Preference&, const std::vector<int64_t>& key,
                       const std::function<void()>& libtorch)>;

torch::Tensor with_product(const torch::Tensor& a_in, const torch::Tensor& b_in,
                           const torch::Tensor& bias_in, const ProductCompute& compute) {
  check_operands(a_in, b_in, bias_in);
  c10::cuda::CUDAGuard guard(a_in.device());
  const int64_t runs = a_in.size(0), m = a_in.size(1), k = a_in.size(2), n = b_in.size(2);
  torch::Tensor out = torch::empty({runs, m, n}, a_in.options());
  if (out.numel() == 0) return out;
  if (k == 0) {
    return bias_in.defined() ? out.copy_(bias_in.unsqueeze(1).expand_as(out)) : out.zero_();
  }
  const torch::Tensor a = readable(a_in), b = readable(b_in);
  const torch::Tensor bias = bias_in.defined() ? bias_in.contiguous() : bias_in;
  const int64_t a_strides[3] = {a.stride(0), a.stride(1), a.stride(2)};
  const int64_t b_strides[3] = {b.stride(0), b.stride(1), b.stride(2)};
  const ColumnMajorProduct shape = *column_major_product(runs, m, n, k, a_strides, b_strides);
  const bool tf32 = at::globalContext().allowTF32CuBLAS();
  const Product product{shape,
                        b.data_ptr<float>(),
                        a.data_ptr<float>(),
                        out.data_ptr<float>(),
                        Layout(shape.first, runs),
                        Layout(shape.second, runs),
                        Layout(shape.out, runs),
                        Operation(shape, tf32, bias.defined() ? bias.data_ptr<float>() : nullptr),
                        at::cuda::getCUDABlasLtWorkspace(),
                        at::cuda::getCUDABlasLtWorkspaceSize()};
  const uint32_t alignments[3] = {alignment_of(product.first, shape.first.batch_stride, runs),
                                  alignment_of(product.second, shape.second.batch_stride, runs),
                                  alignment_of(product.out, shape.out.batch_stride, runs)};
  const Preference preference(product.workspace_bytes, alignments);
  compute(product, preference, key(shape, a.get_device(), tf32, bias.defined(), alignments), [&] {
    torch::bmm_out(out, a, b);
    if (bias.defined()) out.add_(bias.unsqueeze(1));
  });
  return out;
}

}  // namespace

torch::Tensor tuned_bmm(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& bias) {
  return with_product(
      a, b, bias,
      [](const Product& product, const Preference& preference,
         const std::vector<int64_t>& shape_key, const std::function<void()>& libtorch) {
        std::lock_guard<std::mutex> lock(choices_mutex);
        auto chosen = choices.find(shape_key);
        if (chosen == choices.end()) {
          // Inside a capture nothing can be timed: LibTorch's path, until a call outside one tunes.
          if (c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None) {
            return libtorch();
          }
          chosen =
              choices.emplace(shape_key, tune(product, candidates(product, preference), libtorch))
                  .first;
        }
        if (chosen->second.libtorch) return libtorch();
        check(product.run(chosen->second.algo), "the product");
      });
}

torch::Tensor cublaslt_candidate_bmm(const torch::Tensor& a, const torch::Tensor& b,
                                     const torch::Tensor& bias, int index) {
  bool offered = false;
  torch::Tensor out = with_product(a, b, bias,
                                   [&](const Product& product, const Preference& preference,
                                       const std::vector<int64_t>&, const std::function<void()>&) {
                                     const auto found = candidates(product, preference);
                                     if (index >= static_cast<int>(found.size())) return;
                                     offered = true;
                                     check(product.run(found[index].algo), "the product");
                                   });
  return offered ? out : torch::Tensor();
}

std::vector<std::string> tuned_gemm_choices() {
  std::lock_guard<std::mutex> lock(choices_mutex);
  std::vector<std::string> lines;
  for (const auto& [k, choice] : choices) {
    // key(): {device, tf32, bias, batch, m, n, k, first's five, second's five, alignments}.
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%ld × (%ld × %ld × %ld), ops %c%c%s%s: %s, %.1f µs (LibTorch's bmm %.1f; "
                  "cuBLASLt's first of %d candidates %.1f)",
                  static_cast<long>(k[3]), static_cast<long>(k[4]), static_cast<long>(k[5]),
                  static_cast<long>(k[6]), k[7] ? 'T' : 'N', k[12] ? 'T' : 'N',
                  k[2] ? ", bias" : "", k[1] ? ", TF32" : "",
                  choice.libtorch ? "LibTorch's bmm" : algo_text(choice.algo).c_str(), choice.us,
                  choice.libtorch_us, choice.timed, choice.first_us);
    lines.push_back(buf);
  }
  if (untuned_in_captures > 0) {
    lines.push_back(std::to_string(untuned_in_captures) +
                    " calls inside a CUDA graph capture found their shape untuned: LibTorch's bmm");
  }
  return lines;
}

}  // namespace minrnn::core
