// Which device a command runs on. `auto` (every command's default): the first CUDA device when one
// is usable, else the CPU. `cuda` / `cuda:N` where none is usable is refused with one sentence —
// what was asked, what was found, how to fall back — before the caller creates anything.
#pragma once
#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace minrnn::core {

// Why CUDA cannot be used here ("" when it can): this build has no CUDA kernels, no driver, a
// driver older than the CUDA runtime we link, no device, or LibTorch sees none.
std::string cuda_unavailable_reason();

struct DeviceChoice {
  torch::Device device;
  std::string name;  // "cpu" or "cuda:N": what the run records
  std::string note;  // for `auto`: why this device ("no CUDA device found" …); else ""
};

// `requested`: auto, cpu, cuda or cuda:N. `setting` names where it came from in the user's words
// ("--device", or "device" for a config key) and is used in the messages. Throws
// std::invalid_argument for a value that is none of those or a CUDA device that is not usable.
DeviceChoice resolve_device(const std::string& requested, const std::string& setting);
// Whether `device` (a config's value, a resolved name) names CUDA: "cuda" or "cuda:N". `auto`
// names no device: resolve_device says where it runs.
bool names_cuda(const std::string& device);
// resolve_device's refusal of a value that names no device ("expected auto, cpu, cuda or cuda:N,
// got 'tpu'"), "" for one that does, usable or not: a command line refuses a misspelt device as
// a usage error before anything runs (tools/commands.h, device_name()).
std::string why_no_device_name(const std::string& requested);

// "device: auto → cpu (no CUDA device found)"; "" unless `requested` was auto.
std::string describe_choice(const std::string& requested, const DeviceChoice& choice);
// describe_choice's line on stderr, where there is one, once a process (a pack's runs choose
// alike): io::ProgressLine::message_once.
void say_choice(const std::string& requested, const DeviceChoice& choice);

// Whether minrnn's own kernels (kernels/) run on `device`: the CPU always, CUDA where this build
// has them. An op whose inputs are elsewhere runs its formula in LibTorch ops.
bool has_own_kernels(const torch::Device& device);

// How CUDA computes float32 matmuls and convolutions from now on, in the whole process (LibTorch
// keeps it globally): "fp32" (full float32) or "tf32" (tensor cores, 10-bit mantissas). The CPU
// is untouched. Throws std::invalid_argument for another value.
void set_cuda_matmul_precision(const std::string& precision);

}  // namespace minrnn::core
