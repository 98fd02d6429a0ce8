// Work in a training step's backward that nothing later in the backward reads — a Linear's weight
// and bias gradients, a join's γ and β sums, the time table's gradient — queued on a side CUDA
// stream beside the rest, which the step end waits for.
//
// A single run's replayed step is a chain of small kernels, each waiting for the one before
// (an H200 idles most SMs through it): its weight gradients need only what their Linear's
// backward got, yet queue in front of the input gradient the next layer waits for. On a side
// stream they overlap the rest of the backward. A pack of streams fills the GPU with other runs'
// kernels already, so side work is for one model's step: the trainer turns it on for a run
// trained alone and a stacked pack (rl::side_work_for; MINRNN_SIDE_WORK=0 or 1 to say otherwise).
//
// The backward runs on LibTorch's autograd thread, not the one that opened the step, on the
// stream the forward ran on: a step marks that stream (SideWorkScope) and ops look it up. Off, off
// CUDA, or on a stream no scope marked, the work runs where it is called, as it always did.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <vector>

namespace minrnn::core {

// What MINRNN_SIDE_WORK asks: 1 on, 0 off, `otherwise` where unset; another value is refused
// naming the variable (std::invalid_argument). The one reader of the variable.
bool side_work_asked(bool otherwise);
// Process-wide: whether a step opens its scope unless told (rl::TrainStep::set_side_work):
// side_work_asked(false) at start-up — the benches' default.
void set_side_work(bool on);
bool side_work_on();

// `work` (which reads `reads` and returns new tensors) queued on the side stream of the current
// CUDA stream when a scope marked that stream, else run here; returns what `work` returned. The
// tensors' memory is kept from reuse until the streams that read it are done with it.
std::vector<torch::Tensor> beside(const std::vector<torch::Tensor>& reads,
                                  const std::function<std::vector<torch::Tensor>()>& work);

// Marks the current CUDA stream for a step's side work (when `on` and the device is CUDA), and
// makes it wait for all of it at join() (or at the scope's end). One scope a stream at a time.
class SideWorkScope {
 public:
  SideWorkScope(bool on, const torch::Device& device);
  ~SideWorkScope();
  SideWorkScope(const SideWorkScope&) = delete;
  SideWorkScope& operator=(const SideWorkScope&) = delete;
  void join();

 private:
  void* side_ = nullptr;  // the marked stream's side (ops/side_work.cpp), or null
};

}  // namespace minrnn::core
