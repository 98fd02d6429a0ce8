// Dispatch, validation and the reference scans. The fast CPU kernel is in scan_cpu.cpp, the CUDA
// one in scan_cuda.cu (host side: scan_cuda.h).
#include "core/scan.h"

#include <limits>
#include <sstream>
#include <stdexcept>

#include "core/scan_cpu.h"
#if defined(MINRNN_WITH_CUDA)
#include "core/scan_cuda.h"
#endif

namespace minrnn::core {
namespace {

std::string shape_of(const torch::Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

// Shapes: a, b (B,T,D); h0 undefined or (B,D). Returns h0, materialised as zeros when undefined.
torch::Tensor check_inputs(const char* who, const torch::Tensor& a, const torch::Tensor& b,
                           const torch::Tensor& h0, double fill) {
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
  if (!h0.defined()) return torch::full({a.size(0), a.size(2)}, fill, a.options());
  if (h0.dim() != 2 || h0.size(0) != a.size(0) || h0.size(1) != a.size(2)) {
    throw std::invalid_argument(std::string(who) + ": expected h0 of shape (B, D) = (" +
                                std::to_string(a.size(0)) + ", " + std::to_string(a.size(2)) +
                                "), got " + shape_of(h0));
  }
  return h0.to(a.options());
}

}  // namespace

ScanResult linear_scan(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& h0) {
  torch::Tensor init = check_inputs("linear_scan", a, b, h0, 0.0);
#if defined(MINRNN_WITH_CUDA)
  if (a.is_cuda()) return linear_scan_cuda(a, b, init);
#endif
  if (!a.is_cpu()) return linear_scan_sequential(a, b, init);
  const auto dtype = a.scalar_type();
  if (dtype == torch::kFloat || dtype == torch::kDouble) return linear_scan_cpu(a, b, init);
  // Low-precision inputs accumulate in float32, as on the GPU.
  ScanResult r = linear_scan_cpu(a.to(torch::kFloat), b.to(torch::kFloat), init.to(torch::kFloat));
  return {r.h.to(dtype), r.h_last.to(dtype)};
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
