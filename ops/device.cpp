#include "ops/device.h"

#include "io/progress_line.h"
#include "io/text.h"

#if defined(MINRNN_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace minrnn::core {
namespace {

#if defined(MINRNN_WITH_CUDA)
std::string version(int v) {  // 13000 → "13.0"
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}
#endif

// "cuda" → 0, "cuda:3" → 3; -1 for anything else.
int cuda_index(const std::string& s) {
  if (s == "cuda") return 0;
  if (s.rfind("cuda:", 0) != 0 || s.size() == 5 || s.size() > 8) return -1;
  for (size_t i = 5; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
  }
  return std::stoi(s.substr(5));
}

int cuda_device_count() {
#if defined(MINRNN_WITH_CUDA)
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  cudaGetLastError();  // not sticky, but must not surface in a later kernel launch's check
  return count;
#else
  return 0;
#endif
}

}  // namespace

bool has_own_kernels(const torch::Device& device) {
#if defined(MINRNN_WITH_CUDA)
  if (device.is_cuda()) return true;
#endif
  return device.is_cpu();
}

std::string cuda_unavailable_reason() {
#if defined(MINRNN_WITH_CUDA)
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cudaGetLastError();
  if (driver == 0) return "no CUDA driver is installed (libcuda.so was not found)";
  if (driver < runtime) {
    return "the CUDA driver supports CUDA " + version(driver) + " but this build's runtime needs " +
           version(runtime) + " (update the NVIDIA driver)";
  }
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  cudaGetLastError();
  if (err != cudaSuccess)
    return std::string("no usable CUDA device (") + cudaGetErrorString(err) + ")";
  if (count == 0) return "no CUDA device was found";
  if (!torch::cuda::is_available()) return "LibTorch sees no CUDA device";
  return "";
#else
  return "this minrnn was built without CUDA (nvcc was not found when it was configured)";
#endif
}

bool names_cuda(const std::string& device) {
  return io::starts_with(device, "cuda");
}

std::string why_no_device_name(const std::string& requested) {
  if (requested == "cpu" || requested == "auto" || cuda_index(requested) >= 0) return "";
  return "expected auto, cpu, cuda or cuda:N, got '" + requested + "'";
}

DeviceChoice resolve_device(const std::string& requested, const std::string& setting) {
  // How the setting is given: an option, a C++ field (PolicyOptions::device) or a config key.
  const std::string fallback = setting.rfind("--", 0) == 0 ? "pass " + setting + " cpu (or auto)"
                               : setting.find("::") != std::string::npos
                                   ? "set " + setting + " = \"cpu\" (or \"auto\")"
                                   : "set " + setting + ": cpu (or auto)";
  if (requested == "cpu") return {torch::Device(torch::kCPU), "cpu", ""};
  if (requested == "auto") {
    const std::string reason = cuda_unavailable_reason();
    if (reason.empty())
      return {torch::Device(torch::kCUDA, 0), "cuda:0", "a CUDA device is usable"};
    return {torch::Device(torch::kCPU), "cpu", reason};
  }
  if (const std::string why = why_no_device_name(requested); !why.empty())
    throw std::invalid_argument(setting + ": " + why);
  const int index = cuda_index(requested);
  const std::string reason = cuda_unavailable_reason();
  if (!reason.empty()) {
    throw std::invalid_argument(setting + " " + requested + " was asked for, but " + reason + "; " +
                                fallback + " to run on the CPU.");
  }
  const int count = cuda_device_count();
  if (index >= count) {
    throw std::invalid_argument(
        setting + " " + requested + " was asked for, but this machine has " +
        std::to_string(count) + " CUDA device(s) (cuda:0 … cuda:" + std::to_string(count - 1) +
        "); pass one of those, or " + fallback.substr(fallback.find(' ') + 1) + ".");
  }
  return {torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index)),
          "cuda:" + std::to_string(index), ""};
}

std::string describe_choice(const std::string& requested, const DeviceChoice& choice) {
  if (requested != "auto") return "";
  return "device: auto -> " + choice.name + " (" + choice.note + ")";
}

void say_choice(const std::string& requested, const DeviceChoice& choice) {
  const std::string line = describe_choice(requested, choice);
  if (!line.empty()) io::ProgressLine::on_stderr().message_once(line);
}

void set_cuda_matmul_precision(const std::string& precision) {
  if (precision != "fp32" && precision != "tf32")
    throw std::invalid_argument("matmul precision '" + precision + "': expected fp32 or tf32");
  at::globalContext().setAllowTF32CuBLAS(precision == "tf32");
  at::globalContext().setAllowTF32CuDNN(precision == "tf32");
}

}  // namespace minrnn::core
