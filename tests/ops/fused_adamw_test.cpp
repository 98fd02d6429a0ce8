// FusedAdamW (ops/fused_adamw.h) against LibTorch's AdamW: the same trajectory of parameters over
// many steps, and state saved by one loads into the other.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sstream>

#include "ops/fused_adamw.h"

namespace minrnn::core {
namespace {

std::vector<torch::Tensor> make_params(torch::Dtype dtype) {
  torch::manual_seed(3);
  return {torch::randn({37, 5}, dtype).requires_grad_(true),
          torch::randn({70000}, dtype).requires_grad_(true),  // several parallel_for chunks
          torch::randn({1}, dtype).requires_grad_(true)};
}

std::vector<torch::Tensor> clones(const std::vector<torch::Tensor>& ps) {
  std::vector<torch::Tensor> out;
  for (const auto& p : ps) out.push_back(p.detach().clone().requires_grad_(true));
  return out;
}

// `steps` steps of each optimizer on the same gradients (some parameters without one at times).
template <typename A, typename B>
void run_both(A& a, std::vector<torch::Tensor>& pa, B& b, std::vector<torch::Tensor>& pb, int steps,
              int seed) {
  torch::manual_seed(seed);
  for (int s = 0; s < steps; ++s) {
    for (size_t i = 0; i < pa.size(); ++i) {
      if (i == 2 && s % 3 == 1) {  // no gradient this step: the parameter and its state stay
        pa[i].mutable_grad() = torch::Tensor();
        pb[i].mutable_grad() = torch::Tensor();
        continue;
      }
      // Drawn on the CPU whatever the devices, so a GPU run sees the same gradients.
      auto g = torch::randn(pa[i].sizes(), pa[i].options().device(torch::kCPU)) * (1.0 + s);
      pa[i].mutable_grad() = g.to(pa[i].device());
      pb[i].mutable_grad() = g.to(pb[i].device());
    }
    a.step();
    b.step();
  }
}

TEST(FusedAdamW, FollowsLibTorchsAdamW) {
  for (double wd : {0.0, 1e-4, 0.1}) {
    auto pf = make_params(torch::kFloat), pt = clones(pf);
    const auto opts = torch::optim::AdamWOptions(1e-3).weight_decay(wd).betas({0.9, 0.99});
    FusedAdamW fused(pf, opts);
    torch::optim::AdamW reference(pt, opts);
    run_both(fused, pf, reference, pt, 60, 1);
    for (size_t i = 0; i < pf.size(); ++i) {
      EXPECT_TRUE(torch::allclose(pf[i], pt[i], 1e-5, 1e-6))
          << "weight decay " << wd << ", " << i << ": max diff " << (pf[i] - pt[i]).abs().max();
    }
  }
}

TEST(FusedAdamW, StateMovesBetweenItAndLibTorchs) {
  auto pf = make_params(torch::kFloat), pt = clones(pf);
  const auto opts = torch::optim::AdamWOptions(3e-3).weight_decay(0.01);
  FusedAdamW fused(pf, opts);
  torch::optim::AdamW reference(pt, opts);
  run_both(fused, pf, reference, pt, 10, 2);
  // Save the fused one's state, load it into a fresh LibTorch AdamW over copies, and go on: the
  // fused and the loaded one must keep agreeing (step counts and moments carried over).
  torch::serialize::OutputArchive out;
  fused.save(out);
  std::ostringstream bytes;
  out.save_to(bytes);
  auto pl = clones(pf);
  torch::optim::AdamW loaded(pl, opts);
  torch::serialize::InputArchive in;
  std::istringstream read(bytes.str());
  in.load_from(read);
  loaded.load(in);
  run_both(fused, pf, loaded, pl, 10, 3);
  for (size_t i = 0; i < pf.size(); ++i) {
    EXPECT_TRUE(torch::allclose(pf[i], pl[i], 1e-5, 1e-6)) << i;
  }
}

TEST(FusedAdamW, OtherDtypesTakeLibTorchsStep) {
  auto pd = make_params(torch::kDouble), pt = clones(pd);
  const auto opts = torch::optim::AdamWOptions(1e-3).weight_decay(0.01);
  FusedAdamW fused(pd, opts);
  torch::optim::AdamW reference(pt, opts);
  run_both(fused, pd, reference, pt, 5, 4);
  for (size_t i = 0; i < pd.size(); ++i) EXPECT_TRUE(torch::equal(pd[i], pt[i])) << i;
}

// The step a CUDA graph replays (step_with) on the CPU: with the host's update, a gradient scale of
// 1 and apply 1 it is step() bit for bit; its gradient scale is the clip's (the step on the scaled
// gradient); apply 0 leaves every parameter and moment as it was.
TEST(FusedAdamW, StepWithScalarsIsTheStepTheyDescribe) {
  const auto opts = torch::optim::AdamWOptions(1e-3).weight_decay(0.1).betas({0.9, 0.99});
  auto pa = make_params(torch::kFloat), pb = clones(pa);
  FusedAdamW a(pa, opts), b(pb, opts);
  auto scalars_for = [](FusedAdamW& o, float grad_scale, float apply) {
    AdamWStepScalars s{o.next_update(), grad_scale, apply};
    return torch::from_blob(&s, {kAdamWStepScalarCount}, torch::kFloat).clone();
  };
  torch::manual_seed(4);
  for (int step = 0; step < 5; ++step) {
    for (size_t i = 0; i < pa.size(); ++i) {
      const auto g = torch::randn(pa[i].sizes());
      pa[i].mutable_grad() = g;
      pb[i].mutable_grad() = step == 3 ? g * 0.5f : g.clone();
    }
    const float scale = step == 3 ? 0.5f : 1.0f;
    b.step();
    a.step_with(scalars_for(a, scale, 1));
    a.count_step();
  }
  for (size_t i = 0; i < pa.size(); ++i)
    EXPECT_TRUE(torch::equal(pa[i], pb[i])) << "parameter " << i;

  const auto before = clones(pa);
  for (auto& p : pa) p.mutable_grad() = torch::full(p.sizes(), NAN);
  a.step_with(scalars_for(a, 1, 0));
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(torch::equal(pa[i], before[i]));
  const auto& state =
      static_cast<torch::optim::AdamWParamState&>(*a.state().at(pa[0].unsafeGetTensorImpl()));
  EXPECT_FALSE(torch::isnan(state.exp_avg()).any().item<bool>());
  EXPECT_EQ(state.step(), 5);  // step_with counts nothing: count_step() does
}

// On a GPU each parameter tensor's update is one kernel (kernels/cuda/step_end_programs.h,
// emulated on the host in tests/kernels/pointwise_emulated_test.cpp): the trajectory of LibTorch's
// AdamW on the CPU.
TEST(FusedAdamWCuda, FollowsLibTorchsAdamW) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  auto pt = make_params(torch::kFloat);
  std::vector<torch::Tensor> pg;
  for (const auto& p : pt) pg.push_back(p.detach().cuda().requires_grad_(true));
  const auto opts = torch::optim::AdamWOptions(1e-3).weight_decay(0.1).betas({0.9, 0.99});
  FusedAdamW fused(pg, opts);
  torch::optim::AdamW reference(pt, opts);
  run_both(fused, pg, reference, pt, 40, 2);
  for (size_t i = 0; i < pg.size(); ++i) {
    EXPECT_TRUE(torch::allclose(pg[i].cpu(), pt[i], 1e-5, 1e-6)) << "parameter " << i;
  }
}

}  // namespace
}  // namespace minrnn::core
