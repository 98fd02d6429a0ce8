#include "ops/side_work.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "io/env_switch.h"

#ifdef MINRNN_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace minrnn::core {
namespace {

std::atomic<bool>& side_work_flag() {
  static std::atomic<bool> on{side_work_asked(false)};
  return on;
}

}  // namespace

bool side_work_asked(bool otherwise) {
  return io::env_switch("MINRNN_SIDE_WORK", otherwise, "0", "1",
                        "1 (weight gradients beside the backward) or 0 (in line)");
}

void set_side_work(bool on) {
  side_work_flag() = on;
}
bool side_work_on() {
  return side_work_flag();
}

#ifdef MINRNN_WITH_CUDA
namespace {

// A marked stream's side stream and the two events that order them: `forked`, the main stream's
// point a piece of side work waits for; `done`, the side stream's last work (it runs in order, so
// waiting for its last is waiting for all). Kept once made (a captured graph holds the events).
struct Side {
  Side(const c10::cuda::CUDAStream& main, const c10::cuda::CUDAStream& stream)
      : main(main), stream(stream) {}
  c10::cuda::CUDAStream main, stream;
  at::cuda::CUDAEvent forked, done;
  bool marked = false, pending = false;
};

std::mutex registry_mutex;
std::unordered_map<cudaStream_t, std::unique_ptr<Side>>& sides() {
  static std::unordered_map<cudaStream_t, std::unique_ptr<Side>> by_main;
  return by_main;
}

// The side of `main` (made on first use: a pool stream other than main itself), or, with
// `only_marked`, null where no scope marks main.
Side* side_of(const c10::cuda::CUDAStream& main, bool only_marked) {
  const std::lock_guard<std::mutex> lock(registry_mutex);
  auto it = sides().find(main.stream());
  if (it == sides().end()) {
    if (only_marked) return nullptr;
    c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool(false, main.device_index());
    if (stream == main) stream = c10::cuda::getStreamFromPool(false, main.device_index());
    it = sides().emplace(main.stream(), std::make_unique<Side>(main, stream)).first;
  }
  return only_marked && !it->second->marked ? nullptr : it->second.get();
}

}  // namespace

std::vector<torch::Tensor> beside(const std::vector<torch::Tensor>& reads,
                                  const std::function<std::vector<torch::Tensor>()>& work) {
  if (reads.empty() || !reads[0].is_cuda()) return work();
  const c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream(reads[0].device().index());
  Side* side = side_of(main, /*only_marked=*/true);
  if (side == nullptr) return work();
  side->forked.record(main);
  side->forked.block(side->stream);
  std::vector<torch::Tensor> made;
  {
    const c10::cuda::CUDAStreamGuard on_side(side->stream);
    made = work();
  }
  // The caching allocator hands a freed block to the next request of its stream at once: what
  // the side stream reads must not be reused by main's work before it is read, nor what it made
  // by the side's next work before main has read it.
  for (const torch::Tensor& t : reads) {
    if (t.defined() && t.is_cuda()) t.record_stream(side->stream);
  }
  for (const torch::Tensor& t : made) {
    if (t.defined() && t.is_cuda()) t.record_stream(main);
  }
  side->done.record(side->stream);
  side->pending = true;
  return made;
}

SideWorkScope::SideWorkScope(bool on, const torch::Device& device) {
  if (!on || !device.is_cuda()) return;
  Side* side = side_of(c10::cuda::getCurrentCUDAStream(device.index()), /*only_marked=*/false);
  const std::lock_guard<std::mutex> lock(registry_mutex);
  side->marked = true;
  side_ = side;
}

void SideWorkScope::join() {
  Side* side = static_cast<Side*>(side_);
  if (side != nullptr && side->pending) {
    side->done.block(side->main);
    side->pending = false;
  }
}

SideWorkScope::~SideWorkScope() {
  if (side_ == nullptr) return;
  try {
    join();
  } catch (const std::exception&) {
    // Only while an error unwinds the step (a capture that failed leaves its streams unusable):
    // that error is the one to report, and a destructor may not throw.
  }
  const std::lock_guard<std::mutex> lock(registry_mutex);
  static_cast<Side*>(side_)->marked = false;
}

#else  // no CUDA in this build: the work runs where it is called

std::vector<torch::Tensor> beside(const std::vector<torch::Tensor>&,
                                  const std::function<std::vector<torch::Tensor>()>& work) {
  return work();
}
SideWorkScope::SideWorkScope(bool, const torch::Device&) {}
SideWorkScope::~SideWorkScope() = default;
void SideWorkScope::join() {}

#endif

}  // namespace minrnn::core
