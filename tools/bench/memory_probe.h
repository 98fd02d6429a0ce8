// Peak memory of one piece of work, on CPU or CUDA, as torch's allocators see it: for
// `minrnn bench figure1`, which compares minRNN's memory with GRU/LSTM's as the paper does.
//
//   MemoryProbe probe{device};
//   probe.start();      // resident bytes now; the peak counter restarts here
//   work();
//   probe.peak();       // highest bytes live since start()
//
// On CPU the bytes are counted by a wrapper installed around torch's CPU allocator on first use
// (call install_cpu_memory_counter() before any tensor exists so every byte is seen). Memory
// allocated outside torch's allocators (oneDNN scratch, thread stacks, malloc inside libraries) is
// not counted. On CUDA the caching allocator's own statistics are read.
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace minrnn::cli {

void install_cpu_memory_counter();

struct MemoryProbe {
  torch::Device device;
  int64_t resident = 0;  // bytes live when start() was called
  int64_t held = 0;      // on CUDA, bytes the caching allocator held from the GPU then
  void start();
  int64_t peak() const;
  // On CUDA, the most bytes the caching allocator held from the GPU since start() (which gives its
  // cache back first) beyond `held` — live ones and those it keeps for reuse, what nvidia-smi sees
  // of the work; -1 on the CPU, which keeps none.
  int64_t peak_held() const;
};

}  // namespace minrnn::cli
