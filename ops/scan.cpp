// Validation, the autograd function over the raw kernels, device dispatch and the reference scans.
// Kernels: scan_cpu.cpp (CPU), kernels/cuda/scan.cu (CUDA, host side in scan_cuda.cpp); element
// math shared by both in scan_math.h.
#include "ops/scan.h"

#include <limits>
#include <sstream>
#include <stdexcept>

#include "kernels/math/scan_math.h"
#include "ops/scan_cpu.h"
#include "ops/shared_zeros.h"
#if defined(MINRNN_WITH_CUDA)
#include "ops/scan_cuda.h"
#endif

namespace minrnn::core {
namespace {
namespace F = torch::nn::functional;

// Shapes: a, b (B,T,D); h0 undefined or (B,D). Returns h0, materialised as `fill` when undefined:
// with `shared`, zeros_to_read's (fill 0, for the fast kernels, which only read h0: no fill kernel
// in a replayed step).
torch::Tensor check_inputs(const char* who, const torch::Tensor& a, const torch::Tensor& b,
                           const torch::Tensor& h0, double fill, bool shared = false) {
  if (!a.defined() || !b.defined())
    throw std::invalid_argument(std::string(who) + ": a and b are required");
  if (a.dim() != 3) {
    throw std::invalid_argument(std::string(who) + ": expected a of shape (B, T, D), got " +
                                shape_of(a));
  }
  if (a.sizes() != b.sizes()) {
    throw std::invalid_argument(std::string(who) + ": a and b must have the same shape, got a " +
                                shape_of(a) + " and b " + shape_of(b));
  }
  if (a.device() != b.device() || a.scalar_type() != b.scalar_type()) {
    throw std::invalid_argument(std::string(who) + ": a and b must share device and dtype");
  }
  if (!h0.defined()) {
    return shared && fill == 0.0 ? zeros_to_read({a.size(0), a.size(2)}, a)
                                 : torch::full({a.size(0), a.size(2)}, fill, a.options());
  }
  if (h0.dim() != 2 || h0.size(0) != a.size(0) || h0.size(1) != a.size(2)) {
    throw std::invalid_argument(std::string(who) + ": expected h0 of shape (B, D) = (" +
                                std::to_string(a.size(0)) + ", " + std::to_string(a.size(2)) +
                                "), got " + shape_of(h0));
  }
  return h0.to(a.options());
}

// The two inputs of a scan and where their gradients go. Separate tensors (a, b) or (u, c); or,
// when `projection` is set, column blocks of a gate projection (B,T,G·D) read and written in place.
struct ScanOperands {
  torch::Tensor first, second;
};
int64_t projection_blocks(CoefficientForm source) {
  return source == CoefficientForm::kMinLstm || source == CoefficientForm::kMinLstmPositive ? 3 : 2;
}
// first = block 0 (u, or p with k after it), second = the last block (c); D = the state's width.
ScanOperands projection_operands(const torch::Tensor& pre, CoefficientForm source, int64_t D) {
  return {pre.narrow(2, 0, D), pre.narrow(2, (projection_blocks(source) - 1) * D, D)};
}

// One autograd function for every scan on every device: the raw kernels (scan_cpu.h,
// scan_cuda.h) fill preallocated outputs. (first, second) are (a, b), (u, c) as `source` says; with
// `projection`, first_in is a gate projection (projection_operands) and second_in is ignored.
class ScanFunction : public torch::autograd::Function<ScanFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const torch::Tensor& first_in,
                                                const torch::Tensor& second_in,
                                                const torch::Tensor& h0_in, int64_t source_id,
                                                bool projection) {
    // An output nothing reads (h_last, in training) sends no gradient: the backward reads shared
    // zeros for it, where LibTorch would fill a new tensor with them every step.
    ctx->set_materialize_grads(false);
    const auto source = static_cast<CoefficientForm>(source_id);
    torch::Tensor h0 = h0_in.contiguous();
    torch::Tensor pre = projection ? first_in.contiguous() : torch::Tensor();
    const ScanOperands in = projection
                                ? projection_operands(pre, source, h0.size(1))
                                : ScanOperands{first_in.contiguous(), second_in.contiguous()};
    torch::Tensor h = torch::empty({in.first.size(0), in.first.size(1), h0.size(1)},
                                   in.first.options()),
                  h_last = torch::empty_like(h0);
#if defined(MINRNN_WITH_CUDA)
    if (in.first.is_cuda()) {
      scan_forward_cuda(source, in.first, in.second, h0, h, h_last);
    } else
#endif
    {
      scan_forward_cpu(source, in.first, in.second, h0, h, h_last);
    }
    // The direct backward reads a only: keeping b alive would cost memory for nothing.
    if (projection) {
      ctx->save_for_backward({pre, h, h0});
    } else {
      ctx->save_for_backward(
          {in.first, source == CoefficientForm::kDirect ? in.first : in.second, h, h0});
    }
    ctx->saved_data["source"] = source_id;
    return {h, h_last};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const bool projection = saved.size() == 3;
    const torch::Tensor &h = saved[projection ? 1 : 2], &h0 = saved[projection ? 2 : 3];
    const auto source = static_cast<CoefficientForm>(ctx->saved_data["source"].toInt());
    // Gradients nobody sent are zeros the kernels only read.
    torch::Tensor grad_h = grads[0].defined() ? grads[0].contiguous() : zeros_to_read(h.sizes(), h);
    torch::Tensor grad_last =
        grads[1].defined() ? grads[1].contiguous() : zeros_to_read(h0.sizes(), h0);
    const torch::Tensor d_pre = projection ? torch::empty_like(saved[0]) : torch::Tensor();
    const ScanOperands in = projection ? projection_operands(saved[0], source, h0.size(1))
                                       : ScanOperands{saved[0], saved[1]};
    ScanOperands d = projection
                         ? projection_operands(d_pre, source, h0.size(1))
                         : ScanOperands{torch::empty_like(in.first), torch::empty_like(in.first)};
    torch::Tensor dh0 = torch::empty_like(h0);
#if defined(MINRNN_WITH_CUDA)
    if (in.first.is_cuda()) {
      scan_backward_cuda(source, in.first, in.second, h, h0, grad_h, grad_last, d.first, d.second,
                         dh0);
    } else
#endif
    {
      scan_backward_cpu(source, in.first, in.second, h, h0, grad_h, grad_last, d.first, d.second,
                        dh0);
    }
    if (projection) return {d_pre, torch::Tensor(), dh0, torch::Tensor(), torch::Tensor()};
    return {d.first, d.second, dh0, torch::Tensor(), torch::Tensor()};
  }
};

// Runs the fast kernel where there is one: CUDA (all four float dtypes) and CPU (float32/float64;
// bfloat16/half accumulate in float32 as on the GPU). Other devices take `reference`. An undefined
// `second`: `first` is a gate projection.
template <typename Reference>
ScanResult run_fast(CoefficientForm source, const torch::Tensor& first, const torch::Tensor& second,
                    const torch::Tensor& h0, Reference&& reference) {
  auto apply = [&](const torch::Tensor& x, const torch::Tensor& y, const torch::Tensor& h) {
    const bool projection = !y.defined();  // autograd functions take no undefined tensor input
    auto out =
        ScanFunction::apply(x, projection ? x : y, h, static_cast<int64_t>(source), projection);
    return ScanResult{out[0], out[1]};
  };
  if (first.is_cuda() && cuda_scan_available()) return apply(first, second, h0);
  if (!first.is_cpu()) return reference();
  const auto dtype = first.scalar_type();
  if (dtype == torch::kFloat || dtype == torch::kDouble) return apply(first, second, h0);
  const auto f32 = [](const torch::Tensor& t) {
    return t.defined() ? t.to(torch::kFloat) : t;  // an undefined second: a projection
  };
  ScanResult r = apply(f32(first), f32(second), f32(h0));
  return {r.h.to(dtype), r.h_last.to(dtype)};
}

}  // namespace

std::string shape_of(const torch::Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

torch::Tensor g_positive(const torch::Tensor& x) {
  return torch::where(x >= 0, x + 0.5, torch::sigmoid(x));
}

torch::Tensor log_g_positive(const torch::Tensor& x) {
  return torch::where(x >= 0, torch::log(torch::relu(x) + 0.5), -F::softplus(-x));
}

ScanResult linear_scan(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& h0) {
  torch::Tensor init = check_inputs("linear_scan", a, b, h0, 0.0, /*shared=*/true);
  return run_fast(CoefficientForm::kDirect, a, b, init,
                  [&] { return linear_scan_sequential(a, b, h0); });
}

ScanResult gated_scan(const torch::Tensor& u, const torch::Tensor& c, const torch::Tensor& h0,
                      bool positive_candidate) {
  torch::Tensor init = check_inputs("gated_scan", u, c, h0, 0.0, /*shared=*/true);
  return run_fast(positive_candidate ? CoefficientForm::kGatedPositive : CoefficientForm::kGated, u,
                  c, init, [&] { return gated_scan_reference(u, c, h0, positive_candidate); });
}

ScanResult gated_projection_scan(const torch::Tensor& pre, int64_t gates, const torch::Tensor& h0,
                                 bool positive_candidate) {
  if (gates != 2 && gates != 3) {
    throw std::invalid_argument(
        "gated_projection_scan: gates must be 2 (minGRU) or 3 (minLSTM), got " +
        std::to_string(gates));
  }
  if (pre.dim() != 3 || pre.size(2) % gates != 0) {
    throw std::invalid_argument("gated_projection_scan: expected pre of shape (B, T, " +
                                std::to_string(gates) + "·D), got " + shape_of(pre));
  }
  const int64_t D = pre.size(2) / gates;
  torch::Tensor init = check_inputs("gated_projection_scan", pre.narrow(2, 0, D),
                                    pre.narrow(2, 0, D), h0, 0.0, /*shared=*/true);
  const CoefficientForm source =
      gates == 2
          ? (positive_candidate ? CoefficientForm::kGatedPositive : CoefficientForm::kGated)
          : (positive_candidate ? CoefficientForm::kMinLstmPositive : CoefficientForm::kMinLstm);
  return run_fast(source, pre, torch::Tensor(), init, [&] {
    return gated_projection_scan_reference(pre, gates, h0, positive_candidate);
  });
}

ScanResult gated_projection_scan_reference(const torch::Tensor& pre, int64_t gates,
                                           const torch::Tensor& h0, bool positive_candidate) {
  const auto parts = pre.chunk(gates, -1);
  const torch::Tensor u = gates == 2 ? parts[0] : minlstm_gate_logit(parts[0], parts[1]);
  return gated_scan_reference(u, parts.back(), h0, positive_candidate);
}

torch::Tensor minlstm_gate_logit(const torch::Tensor& p, const torch::Tensor& k) {
  return F::logsigmoid(k) - F::logsigmoid(p);
}

ScanResult gated_scan_reference(const torch::Tensor& u, const torch::Tensor& c,
                                const torch::Tensor& h0, bool positive_candidate) {
  torch::Tensor candidate = positive_candidate ? g_positive(c) : c;
  return linear_scan_sequential(torch::sigmoid(-u), torch::sigmoid(u) * candidate, h0);
}

ScanResult linear_scan_sequential(const torch::Tensor& a, const torch::Tensor& b,
                                  const torch::Tensor& h0) {
  torch::Tensor h = check_inputs("linear_scan_sequential", a, b, h0, 0.0);
  std::vector<torch::Tensor> hs;
  hs.reserve(a.size(1));
  for (int64_t t = 0; t < a.size(1); ++t) {
    h = a.select(1, t) * h + b.select(1, t);
    hs.push_back(h);
  }
  torch::Tensor all =
      hs.empty() ? torch::empty({a.size(0), 0, a.size(2)}, a.options()) : torch::stack(hs, 1);
  return {all, h};
}

ScanResult linear_scan_log_parallel(const torch::Tensor& log_a, const torch::Tensor& log_b,
                                    const torch::Tensor& log_h0) {
  const double minus_inf = -std::numeric_limits<double>::infinity();
  torch::Tensor log_init =
      check_inputs("linear_scan_log_parallel", log_a, log_b, log_h0, minus_inf);
  // Index 0 of the time axis holds h_0, so a*_0 = 0 and the logcumsumexp starts from log h_0.
  torch::Tensor a_star = torch::constant_pad_nd(torch::cumsum(log_a, 1), {0, 0, 1, 0});
  torch::Tensor log_values = torch::cat({log_init.unsqueeze(1), log_b}, 1);
  torch::Tensor log_h = a_star + torch::logcumsumexp(log_values - a_star, 1);
  torch::Tensor h = torch::exp(log_h);
  return {h.slice(1, 1), h.select(1, h.size(1) - 1)};
}

bool cuda_scan_available() {
#if defined(MINRNN_WITH_CUDA)
  return torch::cuda::is_available();
#else
  return false;
#endif
}

}  // namespace minrnn::core
