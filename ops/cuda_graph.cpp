#include "ops/cuda_graph.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef MINRNN_WITH_CUDA
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <ATen/cuda/Exceptions.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace minrnn::core {

#ifdef MINRNN_WITH_CUDA

struct CudaGraph::Impl {
  // Kept past capture_end (keep_graph), so its nodes can be counted before instantiate().
  at::cuda::CUDAGraph graph{/*keep_graph=*/true};
  CapturedNodes nodes;
};

namespace {

CapturedNodes count_nodes(cudaGraph_t graph) {
  size_t count = 0;
  AT_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  AT_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  CapturedNodes counted;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    AT_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type == cudaGraphNodeTypeKernel) {
      ++counted.kernels;
    } else if (type == cudaGraphNodeTypeMemcpy) {
      ++counted.copies;
    } else if (type == cudaGraphNodeTypeMemset) {
      ++counted.fills;
    } else {
      ++counted.other;
    }
  }
  return counted;
}

// After a capture that threw: end it (discarding the partial graph) and clear the sticky error, so
// that the stream runs eager work again.
void abandon_capture(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess &&
      status != cudaStreamCaptureStatusNone) {
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial) cudaGraphDestroy(partial);
  }
  (void)cudaGetLastError();
}

}  // namespace

// Captured on a side stream (capture is refused on the legacy default stream) that first waits for
// the current one, which then waits for it: the capture is ordered like any other work.
CudaGraph::CudaGraph(const std::function<void()>& body) : impl_(std::make_unique<Impl>()) {
  const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream();
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  at::cuda::CUDAEvent ready;
  ready.record(current);
  ready.block(side);
  try {
    c10::cuda::CUDAStreamGuard on_side(side);
    impl_->graph.capture_begin();
    body();
    impl_->graph.capture_end();
    impl_->nodes = count_nodes(impl_->graph.raw_cuda_graph());
    impl_->graph.instantiate();
  } catch (const std::exception& e) {
    abandon_capture(side.stream());
    impl_.reset();
    throw std::runtime_error(e.what());
  }
  at::cuda::CUDAEvent captured;
  captured.record(side);
  captured.block(current);
}

CudaGraph::~CudaGraph() = default;

void CudaGraph::replay() {
  impl_->graph.replay();
}

const CapturedNodes& CudaGraph::nodes() const {
  return impl_->nodes;
}

void drain_current_stream(bool on_cuda) {
  if (on_cuda) C10_CUDA_CHECK(cudaStreamSynchronize(c10::cuda::getCurrentCUDAStream()));
}

struct HostUpload::Impl {
  Impl(int index, size_t capacity)
      : device(index >= 0 ? static_cast<c10::DeviceIndex>(index) : c10::cuda::current_device()),
        landing(at::empty({static_cast<int64_t>(capacity)},
                          at::TensorOptions().dtype(at::kByte).device(at::kCUDA, device))) {}
  c10::DeviceIndex device;
  at::Tensor landing;  // where the host's block lands, read by the current stream's device copy
  c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool(false, device);
  at::cuda::CUDAEvent landed, landing_read;
  bool queued = false;
};

HostUpload::HostUpload(bool on_cuda, int device, size_t capacity)
    : impl_(on_cuda ? std::make_unique<Impl>(device, capacity) : nullptr) {}
HostUpload::~HostUpload() = default;

void HostUpload::queue(void* target, const void* host, size_t bytes) {
  if (!impl_) {
    std::memcpy(target, host, bytes);
    return;
  }
  if (bytes > static_cast<size_t>(impl_->landing.numel())) {
    throw std::invalid_argument("HostUpload: " + std::to_string(bytes) +
                                " bytes queued, more than its landing block's " +
                                std::to_string(impl_->landing.numel()));
  }
  void* landing = impl_->landing.data_ptr();
  const c10::cuda::CUDAGuard on_device(impl_->device);
  const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream();
  if (impl_->queued) impl_->landing_read.block(impl_->stream);
  AT_CUDA_CHECK(
      cudaMemcpyAsync(landing, host, bytes, cudaMemcpyHostToDevice, impl_->stream.stream()));
  impl_->landed.record(impl_->stream);
  impl_->landed.block(current);
  AT_CUDA_CHECK(
      cudaMemcpyAsync(target, landing, bytes, cudaMemcpyDeviceToDevice, current.stream()));
  impl_->landing_read.record(current);
  impl_->queued = true;
}

void HostUpload::wait_host_free() {
  if (impl_ && impl_->queued) impl_->landed.synchronize();
}

struct WorkStream::Impl {
  c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
};
WorkStream::WorkStream(bool on_cuda) : impl_(on_cuda ? std::make_unique<Impl>() : nullptr) {}
WorkStream::~WorkStream() = default;

struct WorkStream::Scope::Impl {
  explicit Impl(const c10::cuda::CUDAStream& stream) : guard(stream) {}
  c10::cuda::CUDAStreamGuard guard;
};
WorkStream::Scope::Scope(const WorkStream& s)
    : impl_(s.impl_ ? std::make_unique<Impl>(s.impl_->stream) : nullptr) {}
WorkStream::Scope::~Scope() = default;

#else  // no CUDA in this build

struct CudaGraph::Impl {};
CudaGraph::CudaGraph(const std::function<void()>&) {
  throw std::runtime_error("this build has no CUDA");
}
CudaGraph::~CudaGraph() = default;
void CudaGraph::replay() {}
const CapturedNodes& CudaGraph::nodes() const {
  static const CapturedNodes none;
  return none;
}

void drain_current_stream(bool) {}

struct HostUpload::Impl {};
HostUpload::HostUpload(bool, int, size_t) {}
HostUpload::~HostUpload() = default;
void HostUpload::queue(void* target, const void* host, size_t bytes) {
  std::memcpy(target, host, bytes);
}
void HostUpload::wait_host_free() {}

struct WorkStream::Impl {};
WorkStream::WorkStream(bool) {}
WorkStream::~WorkStream() = default;
struct WorkStream::Scope::Impl {};
WorkStream::Scope::Scope(const WorkStream&) {}
WorkStream::Scope::~Scope() = default;

#endif

}  // namespace minrnn::core
