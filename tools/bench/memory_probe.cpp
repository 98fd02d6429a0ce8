#include "tools/bench/memory_probe.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include <c10/core/CPUAllocator.h>
#if defined(MINRNN_WITH_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace minrnn::cli {
namespace {

// Wraps the default CPU allocator and keeps the bytes live and their high-water mark, like the
// CUDA caching allocator's stats.
class CountingCpuAllocator final : public c10::Allocator {
 public:
  // The inner allocator must hand out simple pointers (context == data) with a raw deleter, as the
  // default CPU allocator does; ours do too, so raw_allocate() keeps working (LSTM uses it).
  explicit CountingCpuAllocator(c10::Allocator* inner)
      : inner_(inner), inner_deleter_(inner->raw_deleter()) {
    if (!inner_deleter_) throw std::runtime_error("CPU allocator has no raw deleter to wrap");
    instance_ = this;
  }
  c10::DataPtr allocate(size_t n) override {
    c10::DataPtr inner = inner_->allocate(n);
    const c10::Device device = inner.device();
    void* data = inner.release_context();
    if (data) {
      std::lock_guard<std::mutex> lock(mutex_);
      sizes_[data] = n;
      current_ += static_cast<int64_t>(n);
      peak_ = std::max(peak_, current_);
    }
    return {data, data, &release, device};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
  int64_t current() {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_;
  }
  int64_t peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    return peak_;
  }
  void reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    peak_ = current_;
  }

 private:
  static void release(void* data) {
    CountingCpuAllocator* self = instance_;
    if (!data) return;
    {
      std::lock_guard<std::mutex> lock(self->mutex_);
      auto it = self->sizes_.find(data);
      if (it != self->sizes_.end()) {
        self->current_ -= static_cast<int64_t>(it->second);
        self->sizes_.erase(it);
      }
    }
    self->inner_deleter_(data);
  }
  static inline CountingCpuAllocator* instance_ = nullptr;
  c10::Allocator* inner_;
  c10::DeleterFnPtr inner_deleter_;
  std::mutex mutex_;
  std::unordered_map<void*, size_t> sizes_;
  int64_t current_ = 0, peak_ = 0;
};

CountingCpuAllocator* cpu_counter() {
  static auto* counter = [] {
    auto* c = new CountingCpuAllocator(c10::GetCPUAllocator());  // lives for the process
    c10::SetCPUAllocator(c, /*priority=*/1);
    return c;
  }();
  return counter;
}

}  // namespace

void install_cpu_memory_counter() {
  cpu_counter();
}

void MemoryProbe::start() {
#if defined(MINRNN_WITH_CUDA)
  if (device.is_cuda()) {
    namespace A = c10::cuda::CUDACachingAllocator;
    A::emptyCache();  // so what the allocator holds from here on is this piece of work's
    A::resetPeakStats(device.index());
    const A::DeviceStats stats = A::getDeviceStats(device.index());
    resident = stats.allocated_bytes[0].current;
    held = stats.reserved_bytes[0].current;
    return;
  }
#endif
  cpu_counter()->reset_peak();
  resident = cpu_counter()->current();
}

int64_t MemoryProbe::peak() const {
#if defined(MINRNN_WITH_CUDA)
  if (device.is_cuda()) {
    return c10::cuda::CUDACachingAllocator::getDeviceStats(device.index()).allocated_bytes[0].peak;
  }
#endif
  return cpu_counter()->peak();
}

int64_t MemoryProbe::peak_held() const {
#if defined(MINRNN_WITH_CUDA)
  if (device.is_cuda()) {
    return c10::cuda::CUDACachingAllocator::getDeviceStats(device.index()).reserved_bytes[0].peak -
           held;
  }
#endif
  return -1;
}

}  // namespace minrnn::cli
