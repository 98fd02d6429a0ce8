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
#include "ops/run_axis.h"
#include "ops/side_work.h"
#include "ops/step_end.h"

namespace minrnn::rl {
namespace {

// Eager steps on CUDA before the capture: the allocator's pools, cuBLAS handles and the optimizer's
// moments exist (at fixed addresses) before the graph records them. The gradients are the graph's
// own: set to none before its backward, they are allocated in the graph's pool.
constexpr int64_t kEagerStepsBeforeCapture = 3;

// The int64 values the host writes before a step, `runs` of each (the step writes its verdict,
// core::StepVerdict, through core::end_step): the runs' dropout bases, then their step numbers.
enum HostId : int64_t { kDropoutBases, kStepNumbers, kHostIdCount };

// The tensors a step reads from the host, in one block of device memory that stays at one address,
// filled from one block of host memory (pinned on CUDA, so the copy is asynchronous) by one copy a
// step: a pack's host thread queues one copy per run and step instead of one per tensor. On CUDA
// the copy lands beside the last step's kernels (core::HostUpload). The last tensor may take only
// its leading values from the host; the rest of it is the device's own.
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
    upload_ = std::make_unique<core::HostUpload>(on.is_cuda(), on.index(),
                                                 static_cast<size_t>(copied_bytes_));
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
  // Part `part` of `parts` equal parts of the slot's host values (a pack's run's).
  template <typename T>
  void fill_part(int slot, int64_t part, int64_t parts, const T* values) {
    const int64_t bytes = slots_[slot].host_bytes / parts;
    std::memcpy(host<uint8_t>(slot) + part * bytes, values, bytes);
  }
  // Blocks until the last commit() has read the host block: before the host writes it again.
  void wait_host_free() { upload_->wait_host_free(); }
  void commit() {
    upload_->queue(device_.data_ptr(), host_.data_ptr(), static_cast<size_t>(copied_bytes_));
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
  std::unique_ptr<core::HostUpload> upload_;
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
  bool side_work = core::side_work_on();
  std::string description;
  // 1, or a pack's runs stacked as one model (ops/run_axis.h), with each run's return scale; the
  // gradient clip they share.
  const int64_t runs;
  std::vector<double> return_scales, lrs;
  double clip;
  StagingBlock staged;
  int states, actions, returns_to_go, timesteps, mask, ids;  // slots of `staged`
  // One run: the step's scalars, the host writing their update (a slot's leading values). A pack:
  // the host writes every run's update into `updates`, which the step copies into the runs' rows
  // of `pack_scalars` (one row a run, each as one run's scalars).
  int scalars = -1, updates = -1;
  torch::Tensor pack_scalars;
  torch::Tensor verdict;          // (runs, kStepVerdictCount): core::StepVerdict of each run
  torch::Tensor loss, grad_norm;  // (runs): the last step's, on the device
  // Each run's loss's own gradient, 1: the backward's seed, made once (LibTorch's default seed is
  // a ones_like, a fill in every replayed step; a pack's sum of losses was a reduction besides).
  torch::Tensor loss_seeds;
  std::optional<core::CudaGraph> graph;
  int64_t steps_here = 0;

  State(Agent& a, core::FusedAdamW& o, const torch::Device& d, StepMode m,
        const std::vector<const TrainConfig*>& run_configs)
      : agent(a),
        params(a.model->parameters()),
        optimizer(o),
        device(d),
        mode(d.is_cuda() ? m : StepMode::kEager),
        runs(static_cast<int64_t>(run_configs.size())),
        lrs(run_configs.size(), 0.0) {
    description = mode == StepMode::kGraph ? "cuda graph" : "eager";
    for (const TrainConfig* c : run_configs) {
      return_scales.push_back(c->return_scale);
      if (c->grad_clip != run_configs[0]->grad_clip) {
        throw std::invalid_argument("TrainStep: a pack's runs share one grad_clip");
      }
    }
    clip = run_configs[0]->grad_clip;
    const TrainConfig& c = agent.config;
    // Process-wide in LibTorch: a pack's runs share one (rl::train_pack checks).
    if (d.is_cuda()) core::set_cuda_matmul_precision(c.matmul_precision);
    const int64_t B = c.batch_size * runs, K = c.context_len;
    const int64_t obs = agent.model->options().obs_dim, act = agent.model->options().act_dim;
    states = staged.add({B, K, obs}, torch::kFloat);
    actions = staged.add({B, K, act}, torch::kFloat);
    returns_to_go = staged.add({B, K, 1}, torch::kFloat);
    timesteps = staged.add({B, K}, torch::kInt64);
    mask = staged.add({B, K}, torch::kFloat);
    ids = staged.add({kHostIdCount * runs}, torch::kInt64);
    const auto on = torch::TensorOptions().device(device);
    if (runs == 1) {
      scalars =
          staged.add({1, core::kAdamWStepScalarCount}, torch::kFloat, core::kHostWrittenScalars);
    } else {
      updates = staged.add({runs, core::kHostWrittenScalars}, torch::kFloat);
      pack_scalars = torch::zeros({runs, core::kAdamWStepScalarCount}, on);
    }
    staged.allocate(device);
    step_scalars().select(1, core::kApplyScalar).fill_(1);
    verdict = torch::zeros({runs, core::kStepVerdictCount}, on.dtype(torch::kInt64));
    loss = torch::zeros({runs}, on);
    grad_norm = torch::zeros({runs}, on);
    loss_seeds = runs == 1 ? torch::ones({}, on) : torch::ones({runs}, on);
  }

  // (runs, kAdamWStepScalarCount): each run's AdamWStepScalars, at addresses that stay.
  torch::Tensor step_scalars() const { return runs == 1 ? staged.device(scalars) : pack_scalars; }

  // The host values of a step of every run into the pinned block, then onto the device.
  void load(const std::vector<RunInputs>& in) {
    staged.wait_host_free();
    std::vector<int64_t> host_ids(static_cast<size_t>(kHostIdCount * runs));
    for (int64_t r = 0; r < runs; ++r) {
      const data::SequenceBatch& b = *in[r].batch;
      staged.fill_part(states, r, runs, b.states.data());
      staged.fill_part(actions, r, runs, b.actions.data());
      // Scaled as they are staged, not on the device: a launch less a replayed step.
      const int64_t count = staged.host_count<float>(returns_to_go) / runs;
      float* scaled = staged.host<float>(returns_to_go) + r * count;
      const float scale = static_cast<float>(return_scales[r]);
      for (int64_t i = 0; i < count; ++i) scaled[i] = b.returns_to_go[i] / scale;
      staged.fill_part(timesteps, r, runs, b.timesteps.data());
      staged.fill_part(mask, r, runs, b.mask.data());
      host_ids[kDropoutBases * runs + r] = static_cast<int64_t>(in[r].dropout_base);
      host_ids[kStepNumbers * runs + r] = in[r].step;
      const float* update = reinterpret_cast<const float*>(&in[r].update);
      runs == 1 ? staged.fill(scalars, update) : staged.fill_part(updates, r, runs, update);
      lrs[r] = in[r].lr;
    }
    staged.fill(ids, host_ids.data());
    staged.commit();
  }

  // The step itself, on the buffers: nothing in it reads a value back to the host.
  void compute() {
    const torch::Tensor host_ids = staged.device(ids), step_scalars = this->step_scalars();
    if (runs > 1) {
      step_scalars.narrow(1, 0, core::kHostWrittenScalars).copy_(staged.device(updates));
    }
    core::DropoutSeeds seeds(host_ids.narrow(0, kDropoutBases * runs, runs));
    DecisionBatch b;
    b.returns_to_go = staged.device(returns_to_go);  // scaled by load()
    b.states = staged.device(states);
    b.actions = staged.device(actions);
    b.timesteps = staged.device(timesteps);
    agent.model->train();
    core::SideWorkScope side_work_scope(side_work, device);
    // Each run's loss: (runs), or the lone run's scalar.
    const torch::Tensor losses =
        masked_action_loss(agent.model->forward(b), b.actions, staged.device(mask), runs);
    // Set to none rather than zeroed, so that the backward's own buffers become the gradients
    // (autograd takes a fresh gradient over) instead of being added into zeros: one kernel per
    // parameter less. Under capture those buffers come from the graph's pool, at the addresses
    // every replay writes them to.
    for (const torch::Tensor& p : params) p.mutable_grad().reset();
    torch::autograd::backward({losses}, {loss_seeds});
    side_work_scope.join();  // the weight gradients queued beside the backward, before the end
    const std::vector<torch::Tensor> grads = gradients_of(params);

    torch::NoGradGuard no_grad;
    // One end for every run (a pack's runs share their clip: rl/stacked_pack.h).
    const bool one = runs == 1;
    core::end_step({losses, grads, host_ids.narrow(0, kStepNumbers * runs, runs),
                    one ? step_scalars[0] : step_scalars, one ? verdict[0] : verdict,
                    one ? loss[0] : loss, one ? grad_norm[0] : grad_norm},
                   clip);
    optimizer.step_with(one ? step_scalars[0] : step_scalars);
  }

  // Queues the step: its inputs, then the graph's replay or the ops themselves.
  void queue(const std::vector<RunInputs>& in) {
    load(in);
    capture_when_due();
    if (graph) {
      graph->replay();
    } else {
      compute();
    }
    ++steps_here;
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
                                 const torch::Tensor& mask, int64_t runs) {
  return core::masked_mse(predicted, actions, mask, runs);
}

TrainStep::TrainStep(Agent& agent, core::FusedAdamW& optimizer, const torch::Device& device,
                     StepMode mode)
    : s_(std::make_unique<State>(agent, optimizer, device, mode,
                                 std::vector<const TrainConfig*>{&agent.config})) {}

TrainStep::TrainStep(Agent& agent, core::FusedAdamW& optimizer, const torch::Device& device,
                     StepMode mode, const std::vector<const TrainConfig*>& runs)
    : s_(std::make_unique<State>(agent, optimizer, device, mode, runs)) {
  if (runs.size() < 2) throw std::invalid_argument("TrainStep: a pack has at least two runs");
}

TrainStep::~TrainStep() = default;

void TrainStep::set_side_work(bool on) {
  if (s_->steps_here > 0) {
    throw std::logic_error("TrainStep::set_side_work: after the first step");
  }
  s_->side_work = on;
}

bool TrainStep::side_work() const {
  return s_->side_work;
}

void TrainStep::run(const data::SequenceBatch& batch, double lr, uint64_t dropout_base) {
  State& s = *s_;
  if (s.runs != 1) throw std::logic_error("TrainStep::run: a pack's step takes run_pack");
  s.queue({{&batch, s.agent.step + 1, dropout_base, lr, s.optimizer.next_update(lr)}});
  s.optimizer.count_step();
  ++s.agent.step;
}

void TrainStep::run_pack(const std::vector<RunInputs>& runs) {
  if (static_cast<int64_t>(runs.size()) != s_->runs || s_->runs == 1) {
    throw std::logic_error("TrainStep::run_pack: the inputs of each of the pack's " +
                           std::to_string(s_->runs) + " runs");
  }
  s_->queue(runs);
}

StepStats TrainStep::last_stats(int64_t run) {
  StepStats stats;
  stats.loss = s_->loss[run].item<double>();
  stats.grad_norm = s_->grad_norm[run].item<double>();
  stats.lr = s_->lrs.at(run);
  return stats;
}

std::string TrainStep::failure(int64_t run) {
  const torch::Tensor verdict = s_->verdict[run].cpu();
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
