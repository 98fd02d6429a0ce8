#include "rl/train_step.h"

#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include "datasets/sampler.h"
#include "ops/device.h"
#include "ops/dropout.h"
#include "ops/masked_mse.h"
#include "ops/side_work.h"
#include "ops/step_end.h"

namespace minrnn::rl {
namespace {

// Eager steps on CUDA before the capture: the allocator's pools, cuBLAS handles and the optimizer's
// moments exist (at fixed addresses) before the graph records them. The gradients are the graph's
// own: set to none before its backward, they are allocated in the graph's pool.
constexpr int64_t kEagerStepsBeforeCapture = 3;

// The int64 values the host writes before a step (the step writes its verdict,
// core::StepVerdict, through core::end_step).
enum HostId : int64_t { kDropoutBase, kStepNumber, kHostIdCount };

// The tensors a step reads from the host, in one block of device memory that stays at one address,
// filled from one block of host memory (pinned on CUDA, so the copy is asynchronous) by one copy a
// step: a pack's host thread queues one copy per run and step instead of one per tensor. The last
// tensor may take only its leading values from the host; the rest of it is the device's own.
class StagingBlock {
 public:
  // Reserves a tensor of `shape`; returns its slot.
  int add(std::vector<int64_t> shape, torch::ScalarType dtype, int64_t host_count = -1) {
    if (copied_bytes_ != end_) throw std::logic_error("StagingBlock: a partial slot must be last");
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    const int64_t element = static_cast<int64_t>(c10::elementSize(dtype));
    Slot slot{std::move(shape), dtype, (end_ + kAlign - 1) / kAlign * kAlign, numel * element,
              (host_count < 0 ? numel : host_count) * element};
    end_ = slot.offset + slot.bytes;
    copied_bytes_ = host_count < 0 ? end_ : slot.offset + slot.host_bytes;
    slots_.push_back(std::move(slot));
    return static_cast<int>(slots_.size()) - 1;
  }
  void allocate(const torch::Device& on) {
    const auto bytes = torch::TensorOptions().dtype(torch::kUInt8);
    device_ = torch::zeros({end_}, bytes.device(on));
    host_ = torch::zeros({end_}, bytes.pinned_memory(on.is_cuda()));
  }
  torch::Tensor device(int slot) const {
    const Slot& s = slots_[slot];
    return device_.narrow(0, s.offset, s.bytes).view(s.dtype).view(s.shape);
  }
  // Where the host writes the slot's values, host_count of them (fill copies them there).
  template <typename T>
  T* host(int slot) {
    return reinterpret_cast<T*>(host_.data_ptr<uint8_t>() + slots_[slot].offset);
  }
  template <typename T>
  int64_t host_count(int slot) const {
    return slots_[slot].host_bytes / static_cast<int64_t>(sizeof(T));
  }
  template <typename T>
  void fill(int slot, const T* values) {
    std::memcpy(host<uint8_t>(slot), values, slots_[slot].host_bytes);
  }
  void commit() {
    device_.narrow(0, 0, copied_bytes_).copy_(host_.narrow(0, 0, copied_bytes_), true);
  }

 private:
  static constexpr int64_t kAlign = 16;
  struct Slot {
    std::vector<int64_t> shape;
    torch::ScalarType dtype;
    int64_t offset, bytes, host_bytes;
  };
  std::vector<Slot> slots_;
  int64_t end_ = 0, copied_bytes_ = 0;
  torch::Tensor host_, device_;
};

// The parameters' gradients after a backward (none for a parameter the loss does not reach).
std::vector<torch::Tensor> gradients_of(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

}  // namespace

struct TrainStep::State {
  Agent& agent;
  const std::vector<torch::Tensor> params;  // the model's, fixed for the step's life
  core::FusedAdamW& optimizer;
  torch::Device device;
  StepMode mode;
  std::string description;
  StagingBlock staged;
  int states, actions, returns_to_go, timesteps, mask, ids, scalars;  // slots of `staged`
  torch::Tensor verdict;          // core::StepVerdict: the first non-finite step and what
  torch::Tensor loss, grad_norm;  // the last step's, on the device
  std::optional<core::CudaGraph> graph;
  core::StreamFence copied;  // CUDA: the last step's inputs were read out of the pinned block
  int64_t steps_here = 0;
  double lr = 0;

  State(Agent& a, core::FusedAdamW& o, const torch::Device& d, StepMode m)
      : agent(a),
        params(a.model->parameters()),
        optimizer(o),
        device(d),
        mode(d.is_cuda() ? m : StepMode::kEager),
        copied(d.is_cuda()) {
    description = mode == StepMode::kGraph ? "cuda graph" : "eager";
    const TrainConfig& c = agent.config;
    // Process-wide in LibTorch: a pack's runs share one (rl::train_pack checks).
    if (d.is_cuda()) core::set_cuda_matmul_precision(c.matmul_precision);
    const int64_t B = c.batch_size, K = c.context_len;
    const int64_t obs = agent.model->options().obs_dim, act = agent.model->options().act_dim;
    states = staged.add({B, K, obs}, torch::kFloat);
    actions = staged.add({B, K, act}, torch::kFloat);
    returns_to_go = staged.add({B, K, 1}, torch::kFloat);
    timesteps = staged.add({B, K}, torch::kInt64);
    mask = staged.add({B, K}, torch::kFloat);
    ids = staged.add({kHostIdCount}, torch::kInt64);
    scalars = staged.add({core::kAdamWStepScalarCount}, torch::kFloat, core::kHostWrittenScalars);
    staged.allocate(device);
    staged.device(scalars)[core::kApplyScalar].fill_(1);
    const auto on = torch::TensorOptions().device(device);
    verdict = torch::zeros({core::kStepVerdictCount}, on.dtype(torch::kInt64));
    loss = torch::zeros({}, on);
    grad_norm = torch::zeros({}, on);
  }

  // The host values of step agent.step + 1 into the pinned block, then onto the device.
  void load(const data::SequenceBatch& b, uint64_t dropout_base) {
    copied.wait();  // the previous step's copy has read the block
    staged.fill(states, b.states.data());
    staged.fill(actions, b.actions.data());
    // Scaled as they are staged, not on the device: a launch less a replayed step.
    float* scaled = staged.host<float>(returns_to_go);
    const float scale = static_cast<float>(agent.config.return_scale);
    const int64_t count = staged.host_count<float>(returns_to_go);
    for (int64_t i = 0; i < count; ++i) scaled[i] = b.returns_to_go[i] / scale;
    staged.fill(timesteps, b.timesteps.data());
    staged.fill(mask, b.mask.data());
    const int64_t host_ids[kHostIdCount] = {static_cast<int64_t>(dropout_base), agent.step + 1};
    staged.fill(ids, host_ids);
    const core::AdamWUpdate update = optimizer.next_update();
    staged.fill(scalars, reinterpret_cast<const float*>(&update));
    staged.commit();
    copied.mark();
  }

  // The step itself, on the buffers: nothing in it reads a value back to the host.
  void compute() {
    const TrainConfig& cfg = agent.config;
    const torch::Tensor host_ids = staged.device(ids), step_scalars = staged.device(scalars);
    core::DropoutSeeds seeds(host_ids.narrow(0, kDropoutBase, 1));
    DecisionBatch b;
    b.returns_to_go = staged.device(returns_to_go);  // scaled by load()
    b.states = staged.device(states);
    b.actions = staged.device(actions);
    b.timesteps = staged.device(timesteps);
    agent.model->train();
    core::SideWorkScope side_work(core::side_work_on(), device);
    const torch::Tensor step_loss =
        masked_action_loss(agent.model->forward(b), b.actions, staged.device(mask));
    // Set to none rather than zeroed, so that the backward's own buffers become the gradients
    // (autograd takes a fresh gradient over) instead of being added into zeros: one kernel per
    // parameter less. Under capture those buffers come from the graph's pool, at the addresses
    // every replay writes them to.
    for (const torch::Tensor& p : params) p.mutable_grad().reset();
    step_loss.backward();
    side_work.join();  // the weight gradients queued beside the backward, before the step end
    const std::vector<torch::Tensor> grads = gradients_of(params);

    torch::NoGradGuard no_grad;
    core::end_step({step_loss, grads, host_ids.narrow(0, kStepNumber, 1), step_scalars, verdict,
                    loss, grad_norm},
                   cfg.grad_clip);
    optimizer.step_with(step_scalars);
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
  return core::masked_mse(predicted, actions, mask);
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
  const torch::Tensor verdict = s_->verdict.cpu();
  const int64_t step = verdict[core::kFirstBadStep].item<int64_t>();
  if (step == 0) return "";
  const bool loss = verdict[core::kBadWhat].item<int64_t>() == core::kBadLoss;
  return "step " + std::to_string(step) + ": " + (loss ? "loss" : "gradient norm") +
         " is not finite";
}

const std::string& TrainStep::description() const {
  return s_->description;
}

core::CapturedNodes TrainStep::graph_nodes() const {
  return s_->graph ? s_->graph->nodes() : core::CapturedNodes{};
}

}  // namespace minrnn::rl
