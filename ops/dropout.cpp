#include "ops/dropout.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "kernels/cpu/dropout.h"
#include "kernels/math/dropout_math.h"
#include "ops/device.h"
#include "ops/parallel_tasks.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/pointwise_cuda.h"
#endif

namespace minrnn::core {
namespace {

using dropout_math::kBias1;
using dropout_math::kBias2;
using dropout_math::kGamma;
using dropout_math::kGammaHigh;

// Elements whose 32-bit draw is below this are dropped: P(drop) = threshold / 2³² = p to 2⁻³².
int64_t drop_threshold(double p) {
  return std::llround(p * 4294967296.0);
}

// out = (x +) keep(i) · y · scale over n contiguous elements; x may be null.
template <typename T>
void masked_scale_add(const T* x, const T* y, T* out, int64_t n, uint64_t seed, int64_t threshold,
                      T scale) {
  parallel_ranges(n, 1 << 14, [&](int64_t begin, int64_t end) {
    dropout_range(x, y, out, begin, end, seed, threshold, scale);
  });
}

// seed + the base's value (a CPU tensor, or none).
uint64_t host_seed(uint64_t seed, const torch::Tensor& base) {
  return base.defined() ? static_cast<uint64_t>(base.item<int64_t>()) + seed : seed;
}

// The fused pass on float/double tensors, CPU or CUDA (its kernel:
// kernels/cuda/pointwise_programs.h); x undefined = no residual.
torch::Tensor run_pass(const torch::Tensor& x_in, const torch::Tensor& y_in, double p,
                       uint64_t seed_in, const torch::Tensor& base) {
#ifdef MINRNN_WITH_CUDA
  if (y_in.is_cuda())
    return dropout_add_cuda(x_in, y_in, seed_in, base, drop_threshold(p), 1.0 / (1.0 - p));
#endif
  const uint64_t seed = host_seed(seed_in, base);
  const torch::Tensor y = y_in.contiguous();
  const torch::Tensor x = x_in.defined() ? x_in.contiguous() : x_in;
  torch::Tensor out = torch::empty_like(y, torch::MemoryFormat::Contiguous);
  AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), "add_dropout", [&] {
    masked_scale_add<scalar_t>(x.defined() ? x.data_ptr<scalar_t>() : nullptr,
                               y.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), y.numel(), seed,
                               drop_threshold(p), static_cast<scalar_t>(1.0 / (1.0 - p)));
  });
  return out;
}

// Forward and backward share the pass: ∂/∂y = keep · scale · grad (the mask regenerated from the
// seed, nothing saved), ∂/∂x = grad. Autograd functions take no undefined inputs, hence two.
// The seed's base, wrapped so that autograd does not take it for an input (an undefined one
// would be refused); kept as the tensor itself, so a graph's backward reads the memory its
// forward did.
struct SeedBase {
  torch::Tensor tensor;
};

void save(torch::autograd::AutogradContext* ctx, double p, int64_t seed, const SeedBase& base) {
  ctx->saved_data["p"] = p;
  ctx->saved_data["dropout_seed"] = seed;
  if (base.tensor.defined()) ctx->saved_data["dropout_base"] = base.tensor;
}
torch::Tensor dropped_grad(torch::autograd::AutogradContext* ctx, const torch::Tensor& g) {
  const auto base = ctx->saved_data.find("dropout_base");
  return run_pass({}, g, ctx->saved_data["p"].toDouble(),
                  static_cast<uint64_t>(ctx->saved_data["dropout_seed"].toInt()),
                  base == ctx->saved_data.end() ? torch::Tensor() : base->second.toTensor());
}

class DropoutFunction : public torch::autograd::Function<DropoutFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& y,
                               double p, int64_t seed, const SeedBase& base) {
    save(ctx, p, seed, base);
    return run_pass({}, y, p, static_cast<uint64_t>(seed), base.tensor);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    return {dropped_grad(ctx, grads[0]), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

class DropoutAddFunction : public torch::autograd::Function<DropoutAddFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& y, double p, int64_t seed,
                               const SeedBase& base) {
    save(ctx, p, seed, base);
    return run_pass(x, y, p, static_cast<uint64_t>(seed), base.tensor);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    return {grads[0], dropped_grad(ctx, grads[0]), torch::Tensor(), torch::Tensor(),
            torch::Tensor()};
  }
};

thread_local DropoutSeeds* current_seeds = nullptr;

// One 64-bit draw from the default CPU generator per dropout call.
uint64_t draw_seed() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return at::check_generator<at::CPUGeneratorImpl>(gen)->random64();
}

// What the next dropout call runs with: the scope's seed, or one drawn from the generator.
std::pair<uint64_t, torch::Tensor> next_seed() {
  if (current_seeds == nullptr) return {draw_seed(), torch::Tensor()};
  if (current_seeds->runs() != 1) {
    throw std::logic_error(
        "dropout: a pack's stacked runs drop out a run at a time, each under its own seeds "
        "(ops/run_axis.h, for_each_run)");
  }
  const uint64_t seed = current_seeds->next();
  return {seed, current_seeds->device_base()};
}

bool active(double p, bool training) {
  if (p < 0 || p >= 1) {
    throw std::invalid_argument("dropout: p must be in [0, 1), got " + std::to_string(p));
  }
  return training && p > 0;
}

// z >> s with zeros shifted in (torch's >> on int64 copies the sign bit).
torch::Tensor shift_right(const torch::Tensor& z, int64_t s) {
  return torch::bitwise_and(z.bitwise_right_shift(s), (int64_t{1} << (64 - s)) - 1);
}

}  // namespace

torch::Tensor dropout_mask_reference(const torch::Tensor& y, double p, uint64_t seed) {
  const auto i64 = y.options().dtype(torch::kInt64);
  // dropout_math::draw in int64 ops: every value kept in [0, 2³²) (products of two such values
  // wrap as uint64's do, and their low 32 bits are uint32's).
  constexpr int64_t kLow = 0xFFFFFFFF;
  const auto low = [](const torch::Tensor& z) { return torch::bitwise_and(z, kLow); };
  const torch::Tensor i = torch::arange(y.numel(), i64);
  torch::Tensor x =
      low(torch::bitwise_and(i, kLow) * int64_t{kGamma} + shift_right(i, 32) * int64_t{kGammaHigh} +
          int64_t{dropout_math::key_of(seed)});
  x = low(torch::bitwise_xor(x, shift_right(x, 16)) * int64_t{kBias1});
  x = low(torch::bitwise_xor(x, shift_right(x, 15)) * int64_t{kBias2});
  x = torch::bitwise_xor(x, shift_right(x, 16));
  return (x >= drop_threshold(p)).view(y.sizes());
}

torch::Tensor add_dropout_seeded(const torch::Tensor& x, const torch::Tensor& y, double p,
                                 uint64_t seed, const torch::Tensor& seed_base) {
  if (x.defined() && x.sizes() != y.sizes()) {
    throw std::invalid_argument("add_dropout: x and y must have one shape");
  }
  const auto dtype = y.scalar_type();
  const bool fast = has_own_kernels(y.device()) &&
                    (!x.defined() || (x.device() == y.device() && x.scalar_type() == dtype)) &&
                    (dtype == torch::kFloat || dtype == torch::kDouble);
  if (fast) {
    const auto s = static_cast<int64_t>(seed);
    const SeedBase base{seed_base};
    return x.defined() ? DropoutAddFunction::apply(x, y, p, s, base)
                       : DropoutFunction::apply(y, p, s, base);
  }
  const uint64_t full_seed = seed_base.defined() ? host_seed(seed, seed_base.cpu()) : seed;
  torch::Tensor dropped = y * dropout_mask_reference(y, p, full_seed) * (1.0 / (1.0 - p));
  return x.defined() ? x + dropped : dropped;
}

PassDropout next_pass_dropout(double p, bool training, const torch::Device& device) {
  if (!active(p, training)) return {{0, 0, 1.0f}, torch::Tensor()};
  const auto [seed, base] = next_seed();
  const bool device_base = base.defined() && device.is_cuda();
  return {{device_base ? seed : host_seed(seed, base.defined() ? base.cpu() : base),
           drop_threshold(p), static_cast<float>(1.0 / (1.0 - p))},
          device_base ? base : torch::Tensor()};
}

bool runs_dropout_ready(double p, bool training, const torch::Device& device, int64_t runs) {
  if (!active(p, training)) return true;
  return current_seeds != nullptr && current_seeds->runs() == runs && device.is_cuda() &&
         current_seeds->device_base().device() == device;
}

PassDropout next_runs_dropout(double p, bool training, const torch::Device& device) {
  if (!active(p, training)) return {{0, 0, 1.0f}, torch::Tensor()};
  if (!runs_dropout_ready(p, training, device, current_seeds ? current_seeds->runs() : 0)) {
    throw std::logic_error(
        "dropout: one pass over a pack's runs needs the pack's seeds on its CUDA device");
  }
  return {{current_seeds->next(), drop_threshold(p), static_cast<float>(1.0 / (1.0 - p))},
          current_seeds->device_base()};
}

const uint64_t* PassDropout::base_pointer() const {
  return base.defined() ? reinterpret_cast<const uint64_t*>(base.data_ptr()) : nullptr;
}

void PassDropout::save(torch::autograd::AutogradContext* ctx) const {
  ctx->saved_data["dropout_seed"] = static_cast<int64_t>(dropout.seed);
  ctx->saved_data["dropout_threshold"] = dropout.threshold;
  ctx->saved_data["dropout_scale"] = static_cast<double>(dropout.scale);
  if (base.defined()) ctx->saved_data["dropout_base"] = base;
}

PassDropout PassDropout::saved(torch::autograd::AutogradContext* ctx) {
  const auto base = ctx->saved_data.find("dropout_base");
  return {{static_cast<uint64_t>(ctx->saved_data["dropout_seed"].toInt()),
           ctx->saved_data["dropout_threshold"].toInt(),
           static_cast<float>(ctx->saved_data["dropout_scale"].toDouble())},
          base == ctx->saved_data.end() ? torch::Tensor() : base->second.toTensor()};
}

torch::Tensor fused_dropout(const torch::Tensor& y, double p, bool training) {
  if (!active(p, training)) return y;
  const auto [seed, base] = next_seed();
  return add_dropout_seeded({}, y, p, seed, base);
}

torch::Tensor add_dropout(const torch::Tensor& x, const torch::Tensor& y, double p, bool training) {
  if (!active(p, training)) return x + y;
  const auto [seed, base] = next_seed();
  return add_dropout_seeded(x, y, p, seed, base);
}

DropoutSeeds::DropoutSeeds(uint64_t base) : base_(base), outer_(current_seeds) {
  current_seeds = this;
}
DropoutSeeds::DropoutSeeds(torch::Tensor device_base)
    : device_base_(std::move(device_base)), outer_(current_seeds) {
  if (device_base_.scalar_type() != torch::kInt64 || device_base_.dim() != 1 ||
      device_base_.numel() < 1) {
    throw std::invalid_argument(
        "DropoutSeeds: the base must be int64 values, one a run (a lone run: one)");
  }
  current_seeds = this;
}
DropoutSeeds::DropoutSeeds(const DropoutSeeds& pack, int64_t run)
    : device_base_(pack.device_base_.narrow(0, run, 1)),
      calls_(pack.calls_),
      outer_(current_seeds) {
  current_seeds = this;
}
DropoutSeeds::~DropoutSeeds() {
  current_seeds = outer_;
}
DropoutSeeds* DropoutSeeds::current() {
  return current_seeds;
}
uint64_t DropoutSeeds::next() {
  // Each call its own seed (the key mixes all 64 bits: calls a stride apart are unrelated).
  constexpr uint64_t kCallStride = 0x9E3779B97F4A7C15ull << 32;
  return base_ + calls_++ * kCallStride;
}

}  // namespace minrnn::core
