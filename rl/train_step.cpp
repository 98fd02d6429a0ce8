#include "rl/train_step.h"

#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "datasets/sampler.h"
#include "ops/cuda_graph.h"
#include "ops/dropout.h"

namespace minrnn::rl {
namespace {

// Eager steps on CUDA before the capture: the allocator's pools, cuBLAS handles, the optimizer's
// moments and the gradients exist (at fixed addresses) before the graph records them.
constexpr int64_t kEagerStepsBeforeCapture = 3;

// The int64 values of a step on the device: two the host writes before it, two the step writes.
enum StepId : int64_t { kDropoutBase, kStepNumber, kFirstBadStep, kBadWhat, kStepIdCount };
constexpr int64_t kHostWrittenIds = 2;
constexpr int64_t kBadLoss = 1, kBadGradNorm = 2;
// The float32 values (kernels/math/adamw_math.h: AdamWStepScalars): the update the host writes,
// then the gradient scale and the apply flag the step writes.
constexpr int64_t kHostWrittenScalars = sizeof(core::AdamWUpdate) / sizeof(float);
constexpr int64_t kGradScale = kHostWrittenScalars, kApply = kHostWrittenScalars + 1;

// A device tensor the step reads and its host copy: pinned memory on CUDA (so the copy is
// asynchronous). The host copy may hold only the leading values of the device tensor.
struct Staged {
  torch::Tensor host, device;
  void make(std::vector<int64_t> shape, torch::ScalarType dtype, const torch::Device& on,
            int64_t host_count = -1) {
    device = torch::zeros(shape, torch::TensorOptions().dtype(dtype).device(on));
    const int64_t n = host_count < 0 ? device.numel() : host_count;
    host = torch::empty({n}, torch::TensorOptions().dtype(dtype).pinned_memory(on.is_cuda()));
  }
  template <typename T>
  void fill(const T* values) {
    std::memcpy(host.data_ptr(), values, host.numel() * sizeof(T));
  }
  void commit() { device.view(-1).narrow(0, 0, host.numel()).copy_(host, /*non_blocking=*/true); }
};

// ‖all gradients‖₂ as LibTorch's clip_grad_norm_ computes it (each tensor's norm, then theirs).
torch::Tensor global_grad_norm(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> norms;
  for (const auto& p : params)
    if (p.grad().defined()) norms.push_back(p.grad().norm(2));
  if (norms.empty()) return torch::zeros({});
  return norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2);
}

}  // namespace

struct TrainStep::State {
  Agent& agent;
  core::FusedAdamW& optimizer;
  torch::Device device;
  StepMode mode;
  std::string description;
  Staged states, actions, returns_to_go, timesteps, mask, ids, scalars;
  torch::Tensor loss, grad_norm;  // the last step's, on the device
  std::optional<core::CudaGraph> graph;
  core::StreamFence copied;  // CUDA: the last step's inputs were read out of the pinned buffers
  int64_t steps_here = 0;
  double lr = 0;

  State(Agent& a, core::FusedAdamW& o, const torch::Device& d, StepMode m)
      : agent(a),
        optimizer(o),
        device(d),
        mode(d.is_cuda() ? m : StepMode::kEager),
        copied(d.is_cuda()) {
    description = mode == StepMode::kGraph ? "cuda graph" : "eager";
    const TrainConfig& c = agent.config;
    const int64_t B = c.batch_size, K = c.context_len;
    const int64_t obs = agent.model->options().obs_dim, act = agent.model->options().act_dim;
    states.make({B, K, obs}, torch::kFloat, device);
    actions.make({B, K, act}, torch::kFloat, device);
    returns_to_go.make({B, K, 1}, torch::kFloat, device);
    timesteps.make({B, K}, torch::kInt64, device);
    mask.make({B, K}, torch::kFloat, device);
    ids.make({kStepIdCount}, torch::kInt64, device, kHostWrittenIds);
    scalars.make({core::kAdamWStepScalarCount}, torch::kFloat, device, kHostWrittenScalars);
    scalars.device[kApply].fill_(1);
    loss = torch::zeros({}, torch::TensorOptions().device(device));
    grad_norm = torch::zeros({}, torch::TensorOptions().device(device));
  }

  // The host values of step agent.step + 1 into the pinned buffers, then onto the device.
  void load(const data::SequenceBatch& b, uint64_t dropout_base) {
    copied.wait();  // the previous step's copies have read these buffers
    states.fill(b.states.data());
    actions.fill(b.actions.data());
    returns_to_go.fill(b.returns_to_go.data());
    timesteps.fill(b.timesteps.data());
    mask.fill(b.mask.data());
    const int64_t host_ids[kHostWrittenIds] = {static_cast<int64_t>(dropout_base), agent.step + 1};
    ids.fill(host_ids);
    const core::AdamWUpdate update = optimizer.next_update();
    scalars.fill(reinterpret_cast<const float*>(&update));
    for (Staged* s : {&states, &actions, &returns_to_go, &timesteps, &mask, &ids, &scalars})
      s->commit();
    copied.mark();
  }

  // The step itself, on the buffers: nothing in it reads a value back to the host.
  void compute() {
    const TrainConfig& cfg = agent.config;
    core::DropoutSeeds seeds(ids.device.narrow(0, kDropoutBase, 1));
    DecisionBatch b;
    b.returns_to_go = returns_to_go.device / cfg.return_scale;
    b.states = states.device;
    b.actions = actions.device;
    b.timesteps = timesteps.device;
    agent.model->train();
    const torch::Tensor step_loss =
        masked_action_loss(agent.model->forward(b), b.actions, mask.device);
    optimizer.zero_grad(/*set_to_none=*/false);  // in place: the gradients keep their addresses
    step_loss.backward();

    torch::NoGradGuard no_grad;
    torch::Tensor norm = torch::zeros_like(loss), scale = torch::ones_like(loss);
    if (cfg.grad_clip > 0) {
      norm = global_grad_norm(agent.model->parameters());
      scale = (cfg.grad_clip / (norm + 1e-6)).clamp_max(1.0);
    }
    const torch::Tensor loss_ok = torch::isfinite(step_loss), norm_ok = torch::isfinite(norm);
    const torch::Tensor ok = loss_ok.logical_and(norm_ok).reshape({1});
    torch::Tensor apply = scalars.device.narrow(0, kApply, 1);
    const torch::Tensor first_bad = (apply != 0).logical_and(ok.logical_not());
    torch::Tensor bad_step = ids.device.narrow(0, kFirstBadStep, 1);
    torch::Tensor bad_what = ids.device.narrow(0, kBadWhat, 1);
    bad_step.copy_(torch::where(first_bad, ids.device.narrow(0, kStepNumber, 1), bad_step));
    const torch::Tensor what =
        torch::where(loss_ok.reshape({1}), torch::full_like(bad_what, kBadGradNorm),
                     torch::full_like(bad_what, kBadLoss));
    bad_what.copy_(torch::where(first_bad, what, bad_what));
    apply.mul_(ok);
    scalars.device.narrow(0, kGradScale, 1).copy_(scale.reshape({1}));
    optimizer.step_with(scalars.device);
    loss.copy_(step_loss);
    grad_norm.copy_(norm);
  }

  // Captures compute() once the warm-up steps are done; where that fails, eager from then on.
  void capture_when_due() {
    if (mode != StepMode::kGraph || graph || steps_here < kEagerStepsBeforeCapture) return;
    try {
      graph.emplace([this] { compute(); });
    } catch (const std::exception& e) {
      mode = StepMode::kEager;
      description = std::string("eager (capture failed: ") + e.what() + ")";
      std::fprintf(stderr, "training step: CUDA graph capture failed, running eagerly: %s\n",
                   e.what());
    }
  }
};

torch::Tensor masked_action_loss(const torch::Tensor& predicted, const torch::Tensor& actions,
                                 const torch::Tensor& mask) {
  const torch::Tensor squared = (predicted - actions).pow(2).mean(-1);  // (B,K)
  return (squared * mask).sum() / mask.sum().clamp_min(1);
}

TrainStep::TrainStep(Agent& agent, core::FusedAdamW& optimizer, const torch::Device& device,
                     StepMode mode)
    : s_(std::make_unique<State>(agent, optimizer, device, mode)) {}

TrainStep::~TrainStep() = default;

void TrainStep::run(const data::SequenceBatch& batch, double lr, uint64_t dropout_base) {
  State& s = *s_;
  for (auto& group : s.optimizer.param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
  s.lr = lr;
  s.load(batch, dropout_base);
  s.capture_when_due();
  if (s.graph) {
    s.graph->replay();
  } else {
    s.compute();
  }
  s.optimizer.count_step();
  ++s.steps_here;
  ++s.agent.step;
}

StepStats TrainStep::last_stats() {
  StepStats stats;
  stats.loss = s_->loss.item<double>();
  stats.grad_norm = s_->grad_norm.item<double>();
  stats.lr = s_->lr;
  return stats;
}

std::string TrainStep::failure() {
  const torch::Tensor ids = s_->ids.device.cpu();
  const int64_t step = ids[kFirstBadStep].item<int64_t>();
  if (step == 0) return "";
  const bool loss = ids[kBadWhat].item<int64_t>() == kBadLoss;
  return "step " + std::to_string(step) + ": " + (loss ? "loss" : "gradient norm") +
         " is not finite";
}

const std::string& TrainStep::description() const {
  return s_->description;
}

}  // namespace minrnn::rl
