#include "infer/pack.h"

#include <stdexcept>

namespace minrnn::core::cpu {

std::vector<float> to_vector(const torch::Tensor& t) {
  auto c = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

Dense pack_dense(const torch::nn::LinearImpl& linear) {
  return pack_dense_rows(linear, 0, linear.weight.size(0));
}

Dense pack_dense_rows(const torch::nn::LinearImpl& linear, int64_t row0, int64_t count) {
  Dense d;
  d.in = linear.weight.size(1);
  d.out = count;
  d.weight_t = to_vector(linear.weight.slice(0, row0, row0 + count).t());
  if (linear.bias.defined()) d.bias = to_vector(linear.bias.slice(0, row0, row0 + count));
  return d;
}

Norm pack_norm(const torch::nn::LayerNormImpl& norm) {
  Norm n;
  const auto& shape = norm.options.normalized_shape();
  if (shape.size() != 1) throw std::invalid_argument("pack_norm: expected a 1-D LayerNorm");
  n.dim = shape[0];
  n.eps = static_cast<float>(norm.options.eps());
  if (norm.options.elementwise_affine()) {
    n.weight = to_vector(norm.weight);
    n.bias = to_vector(norm.bias);
  } else {
    n.weight.assign(n.dim, 1.0f);
    n.bias.assign(n.dim, 0.0f);
  }
  return n;
}

ResidualMlp pack_mlp(const torch::nn::LayerNormImpl& norm, const torch::nn::SequentialImpl& mlp) {
  // The block's Sequential is (Linear, GELU, Linear); anything else is not what we pack.
  if (mlp.size() != 3 || !mlp.ptr(0)->as<torch::nn::LinearImpl>() ||
      !mlp.ptr(1)->as<torch::nn::GELUImpl>() || !mlp.ptr(2)->as<torch::nn::LinearImpl>() ||
      mlp.ptr(1)->as<torch::nn::GELUImpl>()->options.approximate() != "none") {
    throw std::invalid_argument("pack_mlp: expected an MLP of Linear, exact GELU, Linear");
  }
  return {pack_norm(norm), pack_dense(*mlp.ptr(0)->as<torch::nn::LinearImpl>()),
          pack_dense(*mlp.ptr(2)->as<torch::nn::LinearImpl>())};
}

}  // namespace minrnn::core::cpu
