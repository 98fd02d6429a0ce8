#include "models/minrnn.h"

#include "ops/affine.h"

#include <cmath>
#include <stdexcept>

#include "ops/scan.h"

namespace minrnn::core {
namespace F = torch::nn::functional;

const char* cell_name(CellKind cell) {
  return cell == CellKind::kMinGRU ? "mingru" : "minlstm";
}

CellKind parse_cell(const std::string& name) {
  if (name == "mingru") return CellKind::kMinGRU;
  if (name == "minlstm") return CellKind::kMinLSTM;
  throw std::invalid_argument("unknown minRNN cell '" + name + "' (expected mingru or minlstm)");
}

MinRnnImpl::MinRnnImpl(const MinRnnOptions& options) : options_(options) {
  if (options.input_size <= 0) throw std::invalid_argument("MinRnn: input_size must be > 0");
  if (options.expansion <= 0) throw std::invalid_argument("MinRnn: expansion must be > 0");
  if (options.scan == ScanMode::kLogParallel && !options.log_space) {
    throw std::invalid_argument("MinRnn: the log-space parallel scan needs log_space = true");
  }
  hidden_ = std::max<int64_t>(1, std::llround(options.expansion * options.input_size));
  output_ = options.output_size > 0 ? options.output_size : options.input_size;
  const int64_t n_gates = options.cell == CellKind::kMinGRU ? 2 : 3;
  gates = register_module("gates", torch::nn::Linear(options.input_size, n_gates * hidden_));
  if (hidden_ != output_) down = register_module("down", torch::nn::Linear(hidden_, output_));
}

// Both cells reduce to one gate logit u with a = σ(−u) and an input gate σ(u):
//   minGRU  u = k:                                  a = 1 − z,   z = σ(k)
//   minLSTM u = log i − log f (minlstm_gate_logit):  a = f/(f+i),  i/(f+i)   (App. B.2.2)
// — identical to the paper's formulas, and never 0/0 for saturated gates.
torch::Tensor MinRnnImpl::gate_logit(const std::vector<torch::Tensor>& parts) const {
  if (options_.cell == CellKind::kMinGRU) return parts[0];
  return minlstm_gate_logit(parts[0], parts[1]);
}

MinRnnImpl::Coefficients MinRnnImpl::coefficients(const torch::Tensor& pre) const {
  auto parts = pre.chunk(options_.cell == CellKind::kMinGRU ? 2 : 3, -1);
  torch::Tensor u = gate_logit(parts);
  torch::Tensor candidate = options_.log_space ? g_positive(parts.back()) : parts.back();
  return {torch::sigmoid(-u), torch::sigmoid(u) * candidate};
}

// log σ(−u) = −softplus(u), log σ(u) = −softplus(−u).
MinRnnImpl::Coefficients MinRnnImpl::log_coefficients(const torch::Tensor& pre) const {
  auto parts = pre.chunk(options_.cell == CellKind::kMinGRU ? 2 : 3, -1);
  torch::Tensor u = gate_logit(parts);
  return {-F::softplus(u), -F::softplus(-u) + log_g_positive(parts.back())};
}

torch::Tensor MinRnnImpl::project(const torch::Tensor& h) {
  return down ? affine(h, down->weight, down->bias) : h;
}

torch::Tensor MinRnnImpl::forward(const torch::Tensor& x, const torch::Tensor& h0,
                                  torch::Tensor* h_last) {
  if (x.dim() != 3 || x.size(2) != options_.input_size) {
    throw std::invalid_argument("MinRnn::forward: expected x of shape (B, T, " +
                                std::to_string(options_.input_size) + ")");
  }
  torch::Tensor pre = affine(x, gates->weight, gates->bias);
  ScanResult r;
  if (options_.scan == ScanMode::kLogParallel) {
    Coefficients lc = log_coefficients(pre);
    r = linear_scan_log_parallel(lc.a, lc.b, h0.defined() ? torch::log(h0) : h0);
  } else if (options_.scan == ScanMode::kFused) {
    r = gated_projection_scan(pre, options_.cell == CellKind::kMinGRU ? 2 : 3, h0,
                              options_.log_space);
  } else {
    Coefficients c = coefficients(pre);
    r = linear_scan_sequential(c.a, c.b, h0);
  }
  if (h_last) *h_last = r.h_last;
  return project(r.h);
}

torch::Tensor MinRnnImpl::step(const torch::Tensor& x_t, torch::Tensor& h) {
  Coefficients c = coefficients(gates(x_t));
  h = h.defined() ? c.a * h + c.b : c.b;
  return project(h);
}

}  // namespace minrnn::core
