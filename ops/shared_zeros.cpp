#include "ops/shared_zeros.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#if defined(MINRNN_WITH_CUDA)
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace minrnn::core {
namespace {

// Waits for the fill queued on the current stream: the buffer is read from every stream after.
void wait_for_fill(const torch::Device& device) {
#if defined(MINRNN_WITH_CUDA)
  if (device.is_cuda()) c10::cuda::getCurrentCUDAStream(device.index()).synchronize();
#else
  (void)device;
#endif
}

bool capturing(const torch::Device& device) {
#if defined(MINRNN_WITH_CUDA)
  return device.is_cuda() &&
         c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None;
#else
  (void)device;
  return false;
#endif
}

}  // namespace

torch::Tensor zeros_to_read(at::IntArrayRef shape, const torch::Tensor& like) {
  using Key = std::tuple<int, int, int>;  // device type, index, dtype
  static std::mutex mutex;
  // Every buffer made stays: a captured graph keeps raw pointers into the one it read, which a
  // replaced buffer's release would hand to the allocator for other tensors.
  // Never destroyed: freeing CUDA memory from a static destructor races the driver's own exit.
  static auto& buffers = *new std::map<Key, std::vector<torch::Tensor>>;
  const torch::Device device = like.device();
  const int64_t numel = c10::multiply_integers(shape);
  const Key key{static_cast<int>(device.type()), device.index(),
                static_cast<int>(like.scalar_type())};
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<torch::Tensor>& made = buffers[key];
  if (made.empty() || made.back().numel() < numel) {
    if (capturing(device)) return torch::zeros(shape, like.options());
    const int64_t grown = made.empty() ? numel : std::max(numel, 2 * made.back().numel());
    made.push_back(torch::zeros({grown}, like.options()));
    wait_for_fill(device);
  }
  return made.back().narrow(0, 0, numel).view(shape);
}

}  // namespace minrnn::core
