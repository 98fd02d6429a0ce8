// Host side of the tuned stacked products (tuned_gemm_cuda.h): a shape's candidates timed on its
// first call, the choice kept for the process and in a file for later ones (tuned_choice_file.h).
#include "ops/tuned_gemm_cuda.h"

#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAGuard.h>
#include <cublasLt.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "ops/cublaslt_product_cuda.h"
#include "ops/gemm_layout.h"
#include "ops/pointwise_cuda.h"
#include "ops/tuned_choice_file.h"
#include "ops/tuned_gemm_search_cuda.h"
#include "ops/tuned_gemm_switches.h"

namespace minrnn::core {
namespace {

using cublaslt::check;
using cublaslt::Layout;
using cublaslt::Operation;
using cublaslt::Product;
using cublaslt::VectorUse;
using tuned_gemm::Choice;
using tuned_gemm::ProductCall;

using ProductCompute = std::function<void(const ProductCall&)>;

std::mutex choices_mutex;
std::map<std::vector<int64_t>, Choice> choices;  // key(): the shape and everything it ran with
int64_t untuned_in_captures = 0;  // calls inside a capture whose shape had no choice yet

std::vector<int64_t> key(const Product& product, int device, bool tf32, VectorUse use,
                         bool wide_search) {
  const ColumnMajorProduct& p = product.shape;
  std::vector<int64_t> k{device, tf32, static_cast<int64_t>(use), p.batch, p.m, p.n, p.k};
  for (const ColumnMajorOperand* o : {&p.first, &p.second}) {
    k.insert(k.end(), {o->transposed, o->rows, o->cols, o->ld, o->batch_stride});
  }
  const std::array<uint32_t, 3> alignments = product.alignments();
  k.insert(k.end(), alignments.begin(), alignments.end());
  k.push_back(product.vector_alignment());
  k.push_back(wide_search);
  return k;
}

// Each operand as it is where cuBLAS can read it so, else a contiguous copy.
torch::Tensor readable(const torch::Tensor& t) {
  return as_column_major_transpose(t.size(1), t.size(2), t.stride(1), t.stride(2), t.stride(0))
             ? t
             : t.contiguous();
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

// What a call made: a · b (+ bias), and a's sums over k where it asked for them.
struct ProductOutputs {
  torch::Tensor out, sums;
};

// a · b (+ bias, or with a's sums, as `use` says) by `compute`, from operands checked and laid out
// as cuBLASLt reads them.
ProductOutputs with_product(const torch::Tensor& a_in, const torch::Tensor& b_in,
                            const torch::Tensor& bias_in, VectorUse use,
                            const ProductCompute& compute) {
  check_operands(a_in, b_in, bias_in);
  c10::cuda::CUDAGuard guard(a_in.device());
  const int64_t runs = a_in.size(0), m = a_in.size(1), k = a_in.size(2), n = b_in.size(2);
  const bool sums_of_a = use == VectorUse::kSumsOfA;
  ProductOutputs made{torch::empty({runs, m, n}, a_in.options()),
                      sums_of_a ? torch::empty({runs, m}, a_in.options()) : torch::Tensor()};
  torch::Tensor &out = made.out, &sums = made.sums;
  if (out.numel() == 0 || k == 0) {
    if (sums_of_a) sums = a_in.sum(2);
    if (k > 0) return made;
    if (bias_in.defined()) return {out.copy_(bias_in.unsqueeze(1).expand_as(out)), sums};
    out.zero_();
    return made;
  }
  const torch::Tensor a = readable(a_in), b = readable(b_in);
  const torch::Tensor bias = bias_in.defined() ? bias_in.contiguous() : bias_in;
  const int64_t a_strides[3] = {a.stride(0), a.stride(1), a.stride(2)};
  const int64_t b_strides[3] = {b.stride(0), b.stride(1), b.stride(2)};
  const ColumnMajorProduct shape = *column_major_product(runs, m, n, k, a_strides, b_strides);
  const bool tf32 = at::globalContext().allowTF32CuBLAS();
  const bool wide_search = tuned_products_search_wide();
  const float* vector = bias.defined() ? bias.data_ptr<float>()
                        : sums_of_a    ? sums.data_ptr<float>()
                                       : nullptr;
  const Product product{shape,
                        b.data_ptr<float>(),
                        a.data_ptr<float>(),
                        out.data_ptr<float>(),
                        vector,
                        cublaslt::vector_batch_stride(shape, use),
                        Layout(shape.first, runs),
                        Layout(shape.second, runs),
                        Layout(shape.out, runs),
                        Operation(shape, tf32, use, vector),
                        at::cuda::getCUDABlasLtWorkspace(),
                        at::cuda::getCUDABlasLtWorkspaceSize()};
  std::vector<torch::Tensor> outputs{out};
  if (sums_of_a) outputs.push_back(sums);
  compute({product, key(product, a.get_device(), tf32, use, wide_search),
           [&] {
             torch::bmm_out(out, a, b);
             if (bias.defined()) out.add_(bias.unsqueeze(1));
             // a is dyᵀ: its rows' sums are dy's column sums, each run's of its own rows.
             if (sums_of_a) column_sums_cuda(a.transpose(1, 2).reshape({-1, m}), runs, sums);
           },
           outputs, tf32, wide_search});
  return made;
}

// The choices' file of `device` where this process keeps them now (tuned_choice_path), opened on
// its first use.
TunedChoiceFile& choice_file(int device) {
  static std::map<std::string, TunedChoiceFile> files;
  const cudaDeviceProp* gpu = at::cuda::getDeviceProperties(device);
  char name[320];
  std::snprintf(name, sizeof name, "%s sm_%d%d cuBLASLt %zu", gpu->name, gpu->major, gpu->minor,
                cublasLtGetVersion());
  const std::string path = tuned_choice_path(name);
  auto file = files.find(path);
  if (file == files.end()) file = files.emplace(path, TunedChoiceFile(path)).first;
  return file->second;
}

std::string key_text(const std::vector<int64_t>& key) {
  std::string text;
  for (const int64_t k : key) text += (text.empty() ? "" : ",") + std::to_string(k);
  return text;
}

// How a choices' line names what its product does with its vector (a key's VectorUse).
const char* vector_text(int64_t use) {
  if (use == static_cast<int64_t>(VectorUse::kBias)) return ", bias";
  if (use == static_cast<int64_t>(VectorUse::kSumsOfA)) return ", a's sums";
  return "";
}

static_assert(sizeof(cublasLtMatmulAlgo_t::data) == sizeof(TunedChoice::algo),
              "a kept choice holds a cuBLASLt algorithm's words");

std::string text_of(const Choice& choice) {
  TunedChoice kept;
  kept.libtorch = choice.libtorch;
  std::memcpy(kept.algo, choice.algo.data, sizeof kept.algo);
  return choice_text(kept);
}

// The choice a file kept, where it parses and cuBLASLt still accepts its algorithm for the
// product (another cuBLASLt build, or a file edited by hand, may not).
std::optional<Choice> kept_choice(const std::string& text, const Product& p) {
  const std::optional<TunedChoice> parsed = parse_choice(text);
  if (!parsed) return std::nullopt;
  Choice choice;
  choice.kept = true;
  choice.libtorch = parsed->libtorch;
  if (choice.libtorch) return choice;
  cublasLtMatmulHeuristicResult_t checked{};
  std::memcpy(checked.algo.data, parsed->algo, sizeof parsed->algo);
  if (!p.accepts(checked)) return std::nullopt;
  choice.algo = checked.algo;
  return choice;
}

// Keeps a timed choice for later processes; where the file cannot be written, says so once and
// goes on (the choice still holds in this process).
void keep(TunedChoiceFile& file, const std::string& key, const Choice& choice) {
  try {
    file.add(key, text_of(choice));
  } catch (const std::exception& e) {
    static bool said = false;
    if (!said) std::fprintf(stderr, "tuned products: their choices are not kept: %s\n", e.what());
    said = true;
  }
}

// A call by the choice for its shape: this process's, the choices' file's, or timed now.
void run_tuned(const ProductCall& call) {
  std::lock_guard<std::mutex> lock(choices_mutex);
  auto chosen = choices.find(call.key);
  if (chosen == choices.end()) {
    TunedChoiceFile& file = choice_file(static_cast<int>(call.key[0]));
    const std::string key = key_text(call.key);
    if (const auto kept = kept_choice(file.find(key), call.product)) {
      chosen = choices.emplace(call.key, *kept).first;
    } else if (c10::cuda::currentStreamCaptureStatusMayInitCtx() !=
               c10::cuda::CaptureStatus::None) {
      // Nothing can be timed inside a capture: LibTorch's path, until a call outside one.
      ++untuned_in_captures;
      return call.libtorch();
    } else {
      chosen = choices.emplace(call.key, tuned_gemm::search(call)).first;
      if (chosen->second.judged) keep(file, key, chosen->second);
    }
  }
  if (chosen->second.libtorch) return call.libtorch();
  check(call.product.run(chosen->second.algo), "the product");
}

}  // namespace

torch::Tensor tuned_bmm(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& bias) {
  return with_product(a, b, bias, bias.defined() ? VectorUse::kBias : VectorUse::kNone, run_tuned)
      .out;
}

std::pair<torch::Tensor, torch::Tensor> tuned_bmm_and_sums(const torch::Tensor& a,
                                                           const torch::Tensor& b) {
  ProductOutputs made = with_product(a, b, {}, VectorUse::kSumsOfA, run_tuned);
  return {made.out, made.sums};
}

int each_cublaslt_candidate(const torch::Tensor& a, const torch::Tensor& b,
                            const torch::Tensor& bias, bool sums_of_a,
                            const CandidateOutputs& each) {
  if (sums_of_a && bias.defined()) {
    throw std::invalid_argument("each_cublaslt_candidate: a bias or a's sums, not both");
  }
  const VectorUse use = sums_of_a        ? VectorUse::kSumsOfA
                        : bias.defined() ? VectorUse::kBias
                                         : VectorUse::kNone;
  int offered = 0;
  with_product(a, b, bias, use, [&](const ProductCall& call) {
    for (const cublasLtMatmulHeuristicResult_t& candidate :
         cublaslt::candidates(call.product, call.wide_search)) {
      if (call.product.run(candidate.algo) != CUBLAS_STATUS_SUCCESS) continue;  // never chosen
      each(call.outputs[0], sums_of_a ? call.outputs[1] : torch::Tensor());
      ++offered;
    }
  });
  return offered;
}

std::vector<std::string> tuned_gemm_choices() {
  std::lock_guard<std::mutex> lock(choices_mutex);
  std::vector<std::string> lines;
  for (const auto& [k, choice] : choices) {
    // key(): {device, tf32, vector use, batch, m, n, k, first's five, second's five, alignments,
    // the vector's, the search's width}.
    char line[448];
    int at = std::snprintf(
        line, sizeof line, "%ld × (%ld × %ld × %ld), ops %c%c%s%s%s: %s", static_cast<long>(k[3]),
        static_cast<long>(k[4]), static_cast<long>(k[5]), static_cast<long>(k[6]), k[7] ? 'T' : 'N',
        k[12] ? 'T' : 'N', vector_text(k[2]), k[1] ? ", TF32" : "",
        k.back() ? "" : ", the heuristic's candidates alone",
        choice.libtorch ? "LibTorch's bmm" : cublaslt::describe(choice.algo).c_str());
    at = std::min<int>(at, sizeof line - 1);
    if (choice.kept) {
      std::snprintf(line + at, sizeof line - at, ", kept from an earlier process");
    } else {
      std::snprintf(line + at, sizeof line - at,
                    ", %.1f µs (LibTorch's bmm %.1f; cuBLASLt's first of %d candidates timed %.1f; "
                    "%d refused; %zu listed in %.0f ms, all timed in %.0f ms)",
                    choice.us, choice.libtorch_us, choice.timed, choice.first_us, choice.rejected,
                    choice.listed, choice.listing_ms, choice.tuning_ms);
    }
    lines.push_back(line);
  }
  if (untuned_in_captures > 0) {
    lines.push_back(std::to_string(untuned_in_captures) +
                    " calls inside a CUDA graph capture found their shape untuned: LibTorch's bmm");
  }
  return lines;
}

}  // namespace minrnn::core
