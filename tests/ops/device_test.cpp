// core::resolve_device: `auto` picks CUDA only where it is usable, and asking for CUDA where it is
// not is refused with one sentence naming what was asked, what was found and the fallback. Both
// branches are checked on whichever kind of machine runs the suite.
#include "ops/device.h"

#include <gtest/gtest.h>

using namespace minrnn::core;

namespace {

std::string refusal(const std::string& requested, const std::string& setting) {
  try {
    resolve_device(requested, setting);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Device, CpuIsAlwaysCpu) {
  const DeviceChoice c = resolve_device("cpu", "--device");
  EXPECT_TRUE(c.device.is_cpu());
  EXPECT_EQ(c.name, "cpu");
  EXPECT_EQ(describe_choice("cpu", c), "");
}

// "cuda" and "cuda:N" name CUDA; auto names no device until resolved (five places once asked this
// by hand).
TEST(Device, NamesCudaByTheNameAlone) {
  EXPECT_TRUE(names_cuda("cuda"));
  EXPECT_TRUE(names_cuda("cuda:1"));
  EXPECT_FALSE(names_cuda("cpu"));
  EXPECT_FALSE(names_cuda("auto"));
  EXPECT_FALSE(names_cuda(""));
}

TEST(Device, AutoTakesTheGpuOnlyWhereItIsUsable) {
  const std::string reason = cuda_unavailable_reason();
  const DeviceChoice c = resolve_device("auto", "device");
  if (reason.empty()) {
    EXPECT_TRUE(c.device.is_cuda());
    EXPECT_EQ(c.name, "cuda:0");
  } else {
    EXPECT_TRUE(c.device.is_cpu());
    EXPECT_EQ(c.name, "cpu");
    EXPECT_EQ(c.note, reason);
    EXPECT_EQ(describe_choice("auto", c), "device: auto -> cpu (" + reason + ")");
  }
}

TEST(Device, AGpuWhereNoneIsUsableIsRefusedInOneSentence) {
  const std::string reason = cuda_unavailable_reason();
  if (reason.empty()) {
    EXPECT_TRUE(resolve_device("cuda", "--device").device.is_cuda());
    const std::string msg = refusal("cuda:99", "--device");
    EXPECT_NE(msg.find("--device cuda:99 was asked for"), std::string::npos) << msg;
    return;
  }
  for (const char* asked : {"cuda", "cuda:1"}) {
    const std::string msg = refusal(asked, "--device");
    EXPECT_EQ(msg, std::string("--device ") + asked + " was asked for, but " + reason +
                       "; pass --device cpu (or auto) to run on the CPU.");
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  EXPECT_NE(refusal("cuda", "device").find("set device: cpu (or auto)"), std::string::npos);
}

TEST(Device, AnythingElseIsRefusedNamingTheSetting) {
  for (const char* bad : {"gpu", "cuda:", "cuda:x", "CPU", ""}) {
    const std::string msg = refusal(bad, "--device");
    EXPECT_NE(msg.find("--device: expected auto, cpu, cuda or cuda:N"), std::string::npos)
        << bad << ": " << msg;
  }
}

// tf32 turns LibTorch's TF32 switches for CUDA matmuls and convolutions on, fp32 off again; the
// setting lives in the process, so the test leaves it as it found it.
TEST(Device, MatmulPrecisionSetsLibTorchsTf32SwitchesAndRefusesOthers) {
  auto& context = at::globalContext();
  const bool cublas = context.allowTF32CuBLAS(), cudnn = context.allowTF32CuDNN();
  set_cuda_matmul_precision("tf32");
  EXPECT_TRUE(context.allowTF32CuBLAS());
  EXPECT_TRUE(context.allowTF32CuDNN());
  set_cuda_matmul_precision("fp32");
  EXPECT_FALSE(context.allowTF32CuBLAS());
  EXPECT_FALSE(context.allowTF32CuDNN());
  EXPECT_THROW(set_cuda_matmul_precision("bf16"), std::invalid_argument);
  context.setAllowTF32CuBLAS(cublas);
  context.setAllowTF32CuDNN(cudnn);
}
