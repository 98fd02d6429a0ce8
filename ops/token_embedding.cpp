#include "ops/token_embedding.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/token_embedding.h"
#include "ops/device.h"
#include "ops/run_axis.h"
#include "ops/token_embedding_cuda.h"  // the op's tensor list; its CUDA half is called with CUDA only

namespace minrnn::core {
namespace {

using torch::autograd::variable_list;

TokenLayout layout_of(torch::TensorList flat, int groups, int64_t tokens) {
  const torch::Tensor &first = flat[0], &table = flat[token_table_at(groups)];
  TokenLayout s{first.size(0), first.size(1), tokens, table.size(-1), table.size(-2), groups, {}};
  for (int j = 0; j < groups; ++j) s.inputs[j] = flat[3 * j].size(2);
  s.runs = table.dim() == 3 ? table.size(0) : 1;  // a pack's runs stacked (CUDA only)
  return s;
}

// The CPU loops take the tensors' pointers (kernels/cpu/token_embedding.h); each weight goes as
// its (n, D) transpose, a token's channels one contiguous run.
torch::Tensor forward_cpu(const TokenLayout& s, torch::TensorList flat) {
  torch::Tensor out = torch::empty({s.batch, s.tokens, s.width}, flat[0].options());
  torch::Tensor transposed[kMaxTokenGroups];
  TokenGroupsCpu groups{};
  for (int j = 0; j < s.groups; ++j) {
    transposed[j] = flat[3 * j + 1].t().contiguous();
    groups.inputs[j] = flat[3 * j].data_ptr<float>();
    groups.weights_t[j] = transposed[j].data_ptr<float>();
    groups.biases[j] = flat[3 * j + 2].data_ptr<float>();
  }
  token_embedding_forward(s, groups, flat[token_timesteps_at(s.groups)].data_ptr<int64_t>(),
                          flat[token_table_at(s.groups)].data_ptr<float>(), out.data_ptr<float>());
  return out;
}

// Deterministic (the steps in ascending order); the GPU's sums run in another fixed order, so the
// two agree to rounding.
variable_list backward_cpu(const TokenLayout& s, torch::TensorList flat,
                           const torch::Tensor& tokens_grad) {
  const auto zeros = [&](int64_t rows) {
    return torch::zeros({rows, s.width}, tokens_grad.options());
  };
  variable_list grads(flat.size());
  torch::Tensor weight_t[kMaxTokenGroups];  // (n, D) while summing
  const float* inputs[kMaxTokenGroups];
  float *weight_grads[kMaxTokenGroups], *bias_grads[kMaxTokenGroups];
  for (int j = 0; j < s.groups; ++j) {
    weight_t[j] = zeros(s.inputs[j]);
    grads[3 * j + 2] = torch::zeros({s.width}, tokens_grad.options());
    inputs[j] = flat[3 * j].data_ptr<float>();
    weight_grads[j] = weight_t[j].data_ptr<float>();
    bias_grads[j] = grads[3 * j + 2].data_ptr<float>();
  }
  torch::Tensor table_grad = zeros(s.table_rows);
  std::vector<float> scratch(static_cast<size_t>(s.width));
  token_embedding_backward(s, inputs, flat[token_timesteps_at(s.groups)].data_ptr<int64_t>(),
                           tokens_grad.data_ptr<float>(), weight_grads, bias_grads,
                           table_grad.data_ptr<float>(), scratch.data());
  for (int j = 0; j < s.groups; ++j) grads[3 * j + 1] = weight_t[j].t().contiguous();
  grads[token_table_at(s.groups)] = table_grad;
  return grads;
}

class TokenEmbeddingFunction : public torch::autograd::Function<TokenEmbeddingFunction> {
 public:
  // `flat` as a TensorList: LibTorch finds the inputs that want gradients in one, not in a vector.
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::TensorList flat,
                               int64_t groups, int64_t tokens) {
    const TokenLayout s = layout_of(flat, static_cast<int>(groups), tokens);
    ctx->save_for_backward(flat.vec());
    ctx->saved_data["groups"] = groups;
    ctx->saved_data["tokens"] = tokens;
#ifdef MINRNN_WITH_CUDA
    if (flat[0].is_cuda()) return token_embedding_cuda(s, flat);
#endif
    return forward_cpu(s, flat);
  }

  static variable_list backward(torch::autograd::AutogradContext* ctx, variable_list grads) {
    const variable_list flat = ctx->get_saved_variables();
    const TokenLayout s = layout_of(flat, static_cast<int>(ctx->saved_data["groups"].toInt()),
                                    ctx->saved_data["tokens"].toInt());
    const torch::Tensor g = grads[0].contiguous();
    variable_list out;
#ifdef MINRNN_WITH_CUDA
    if (g.is_cuda()) out = token_embedding_backward_cuda(s, flat, g);
#endif
    if (!g.is_cuda()) out = backward_cpu(s, flat, g);
    out.resize(out.size() + 2);  // `groups` and `tokens` have none
    return out;
  }
};

bool fusable(torch::TensorList flat, int groups) {
  const torch::Device device = flat[0].device();
  for (size_t at = 0; at < flat.size(); ++at) {
    const torch::Tensor& x = flat[at];
    const auto want = at == token_timesteps_at(groups) ? torch::kLong : torch::kFloat;
    if (x.scalar_type() != want || !x.is_contiguous() || x.device() != device) return false;
  }
  for (int j = 0; j < groups; ++j) {
    if (flat[3 * j].requires_grad()) return false;
  }
  return groups <= kMaxTokenGroups && has_own_kernels(device);
}

void check_shapes(const std::vector<TokenGroup>& groups, const torch::Tensor& timesteps,
                  const torch::Tensor& table, int64_t tokens) {
  const auto fail = [](const std::string& what) {
    throw std::invalid_argument("embed_tokens: " + what);
  };
  if (groups.empty()) fail("no token groups");
  if (timesteps.dim() != 2 || table.dim() != 2 || table.size(0) < 1) {
    fail("timesteps must be (B, K) and the time table (rows ≥ 1, D)");
  }
  const int64_t B = timesteps.size(0), K = timesteps.size(1), D = table.size(1);
  for (const TokenGroup& g : groups) {
    if (g.input.dim() != 3 || g.input.size(0) != B || g.input.size(1) != K ||
        g.weight.sizes() != torch::IntArrayRef{D, g.input.size(2)} ||
        g.bias.sizes() != torch::IntArrayRef{D}) {
      fail(
          "a group's input must be (B, K, n), its weight (D, n) and bias (D), with B, K of the "
          "timesteps and D of the time table");
    }
  }
  const int64_t most = static_cast<int64_t>(groups.size()) * K;
  if (tokens < 0 || tokens > most) {
    fail(std::to_string(tokens) + " tokens asked of windows of " + std::to_string(most));
  }
}

// The same in LibTorch ops.
torch::Tensor formula(const std::vector<TokenGroup>& groups, const torch::Tensor& timesteps,
                      const torch::Tensor& table, int64_t tokens) {
  std::vector<torch::Tensor> per_group;
  for (const TokenGroup& g : groups) per_group.push_back(torch::linear(g.input, g.weight, g.bias));
  const int64_t B = timesteps.size(0), K = timesteps.size(1),
                G = static_cast<int64_t>(groups.size());
  const torch::Tensor time = torch::embedding(table, timesteps.clamp(0, table.size(0) - 1));
  return (torch::stack(per_group, 2) + time.unsqueeze(2))
      .view({B, G * K, table.size(1)})
      .narrow(1, 0, tokens);
}

}  // namespace

torch::Tensor embed_tokens(const std::vector<TokenGroup>& groups, const torch::Tensor& timesteps,
                           const torch::Tensor& time_table, int64_t tokens) {
  const int G = static_cast<int>(groups.size());
  const auto flat_of = [&](const std::vector<TokenGroup>& of, const torch::Tensor& steps,
                           const torch::Tensor& table) {
    variable_list flat;
    for (const TokenGroup& g : of) flat.insert(flat.end(), {g.input, g.weight, g.bias});
    flat.insert(flat.end(), {steps, table});
    return flat;
  };
  if (const int64_t runs = stacked_runs(time_table, 2, "embed_tokens' time table")) {
    std::vector<std::vector<TokenGroup>> each(static_cast<size_t>(runs));
    for (int64_t r = 0; r < runs; ++r) {
      for (const TokenGroup& g : groups) {
        each[r].push_back(
            {run_rows(g.input, runs, r), run_param(g.weight, r), run_param(g.bias, r)});
      }
      check_shapes(each[r], run_rows(timesteps, runs, r), run_param(time_table, r), tokens);
    }
    // On CUDA the kernels take every run at once (TokenLayout::runs): each window its run's
    // weights and table, each run's gradients from its own windows.
    const variable_list stacked = flat_of(groups, timesteps, time_table);
    if (time_table.is_cuda() && fusable(stacked, G)) {
      return TokenEmbeddingFunction::apply(torch::TensorList(stacked), static_cast<int64_t>(G),
                                           tokens);
    }
    return for_each_run(runs, [&](int64_t r) {
      return embed_tokens(each[r], run_rows(timesteps, runs, r), run_param(time_table, r), tokens);
    });
  }
  check_shapes(groups, timesteps, time_table, tokens);
  const variable_list flat = flat_of(groups, timesteps, time_table);
  if (!fusable(flat, G)) return formula(groups, timesteps, time_table, tokens);
  return TokenEmbeddingFunction::apply(torch::TensorList(flat), static_cast<int64_t>(G), tokens);
}

}  // namespace minrnn::core
