// Host work a replayed training step needs on CUDA (rl/train_step.h), behind a header that compiles
// without CUDA: a callable captured once as a CUDA graph, the host's wait for the current stream,
// a step's inputs uploaded beside the last step's kernels (the host kept from overwriting pinned
// memory the copy still reads), and a stream of a run's own so that the runs of a pack
// (rl::train_pack) run side by side on one GPU.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace minrnn::core {

// What a capture recorded, by kind of graph node: each one is work a replay launches, so their
// count is what a replayed step pays in launch gaps whatever the kernels compute.
struct CapturedNodes {
  int64_t kernels = 0, copies = 0, fills = 0, other = 0;
  int64_t total() const { return kernels + copies + fills + other; }
};

class CudaGraph {
 public:
  // Captures the kernels `body` launches on the current CUDA device (they do not run). Throws
  // std::runtime_error, with CUDA's or LibTorch's reason, where capture fails (a host sync inside,
  // a build without CUDA); the stream is usable afterwards.
  explicit CudaGraph(const std::function<void()>& body);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Runs the captured kernels on the current stream, after the work queued there.
  void replay();
  // Counted once, between the capture and the graph's instantiation.
  const CapturedNodes& nodes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Blocks the host until the device has done what the current stream queued so far (nothing to
// wait for off CUDA, or in a build without CUDA): where tensors change hands between one stream
// and another's work.
void drain_current_stream(bool on_cuda);

// A block of pinned host memory copied onto the device every step without holding up the
// current stream: the host-to-device copy runs on a stream of its own into a landing block, beside
// the current stream's earlier work (the last step's kernels), and the current stream then takes
// it into place by a device-to-device copy. In the current stream's own order, a stacked pack of
// 32's 2.9 MB batch held its kernels ~60 µs a step (PCIe, H200, 2026-11-28); the device copy
// takes a few. Off CUDA (on_cuda false, or a build without CUDA) queue() copies at once.
class HostUpload {
 public:
  // device: the CUDA device the targets are on (−1: the current one), where the upload keeps its
  // landing block of `capacity` bytes.
  HostUpload(bool on_cuda, int device, size_t capacity);
  ~HostUpload();
  HostUpload(const HostUpload&) = delete;
  HostUpload& operator=(const HostUpload&) = delete;

  // `bytes` (at most the capacity) of host (pinned on CUDA) into target: onto the landing block
  // once the last queue()'s device copy has read it, then from there into target on the current
  // stream once they have landed. Off CUDA, host into target now.
  void queue(void* target, const void* host, size_t bytes);
  // Blocks the host until the last queue()'s copy has read the host block: call it before writing
  // the block again.
  void wait_host_free();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A CUDA stream of one run's own (from LibTorch's pool), or nothing off CUDA. While a Scope lives,
// the work the thread queues goes to it: runs stepped in turn from one thread then overlap on the
// GPU instead of queueing behind each other on one stream, each still in its own order.
class WorkStream {
 public:
  explicit WorkStream(bool on_cuda);
  ~WorkStream();
  WorkStream(const WorkStream&) = delete;
  WorkStream& operator=(const WorkStream&) = delete;

  class Scope {
   public:
    explicit Scope(const WorkStream& stream);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
  };

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace minrnn::core
