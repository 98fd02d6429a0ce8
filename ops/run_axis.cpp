#include "ops/run_axis.h"

#include <atomic>
#include <optional>
#include <stdexcept>

#include "ops/dropout.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/pointwise_cuda.h"
#endif

namespace minrnn::core {

int64_t stacked_runs(const torch::Tensor& param, int64_t lone_dim, const std::string& what) {
  if (!param.defined() || param.dim() == lone_dim) return 0;
  if (param.dim() == lone_dim + 1 && param.size(0) > 0) return param.size(0);
  throw std::invalid_argument(what + ": expected " + std::to_string(lone_dim) +
                              " dimensions (one run) or " + std::to_string(lone_dim + 1) +
                              " (a pack's runs stacked), got " + std::to_string(param.dim()));
}

namespace {
std::atomic<bool> batched_on_cpu{false};
}  // namespace

bool batched_runs(const torch::Device& device) {
  return device.is_cuda() || batched_on_cpu;
}

void set_batched_runs_on_cpu(bool on) {
  batched_on_cpu = on;
}

torch::Tensor run_column_sums(const torch::Tensor& rows, int64_t runs) {
#ifdef MINRNN_WITH_CUDA
  if (rows.is_cuda()) return column_sums_cuda(rows, runs);
#endif
  return rows.reshape({runs, -1, rows.size(-1)}).sum(1);
}

int64_t dropout_runs() {
  const DropoutSeeds* seeds = DropoutSeeds::current();
  return seeds ? seeds->runs() : 1;
}

torch::Tensor run_rows(const torch::Tensor& x, int64_t runs, int64_t run) {
  if (!x.defined()) return x;
  if (x.dim() < 1 || x.size(0) % runs != 0) {
    throw std::invalid_argument("run_rows: dim 0 of (" + std::to_string(x.dim() ? x.size(0) : 0) +
                                ", …) does not split into " + std::to_string(runs) + " runs");
  }
  const int64_t n = x.size(0) / runs;
  return x.narrow(0, run * n, n);
}

torch::Tensor run_param(const torch::Tensor& param, int64_t run) {
  return param.defined() ? param.select(0, run) : param;
}

std::vector<torch::Tensor> for_each_run(
    int64_t runs, const std::function<std::vector<torch::Tensor>(int64_t run)>& op) {
  DropoutSeeds* pack = DropoutSeeds::current();
  if (pack && pack->runs() != 1 && pack->runs() != runs) {
    throw std::invalid_argument("for_each_run: " + std::to_string(runs) +
                                " runs under a dropout scope of " + std::to_string(pack->runs()));
  }
  if (pack && pack->runs() == 1) pack = nullptr;  // a lone run's scope: every run draws from it
  std::vector<std::vector<torch::Tensor>> outputs;
  std::optional<uint64_t> calls_after;
  for (int64_t r = 0; r < runs; ++r) {
    std::optional<DropoutSeeds> seeds;
    if (pack) seeds.emplace(*pack, r);
    outputs.push_back(op(r));
    if (!seeds) continue;
    if (calls_after && *calls_after != seeds->calls()) {
      throw std::logic_error("for_each_run: run " + std::to_string(r) +
                             " took another number of dropout seeds than run 0");
    }
    calls_after = seeds->calls();
  }
  if (calls_after) pack->continue_after(*calls_after);
  std::vector<torch::Tensor> stacked;
  for (size_t k = 0; k < outputs[0].size(); ++k) {
    if (!outputs[0][k].defined()) {
      stacked.emplace_back();
      continue;
    }
    std::vector<torch::Tensor> parts;
    for (const auto& out : outputs) parts.push_back(out[k]);
    stacked.push_back(torch::cat(parts, 0));
  }
  return stacked;
}

torch::Tensor for_each_run(int64_t runs, const std::function<torch::Tensor(int64_t run)>& op) {
  return for_each_run(runs, [&](int64_t r) -> std::vector<torch::Tensor> { return {op(r)}; })[0];
}

namespace {

// `module`'s parameter `name`, which it must have, the other module's structure being its own.
torch::Tensor parameter_named(const torch::nn::Module& module, const std::string& name,
                              const char* caller) {
  // named_parameters() is a new dict each call: find()'s pointer is into this one, kept alive.
  const auto parameters = module.named_parameters();
  const torch::Tensor* found = parameters.find(name);
  if (!found) {
    throw std::invalid_argument(std::string(caller) + ": a run has no parameter '" + name +
                                "' (the runs must share one structure)");
  }
  return *found;
}

}  // namespace

void stack_runs(torch::nn::Module& pack, const std::vector<const torch::nn::Module*>& runs) {
  if (runs.empty()) throw std::invalid_argument("stack_runs: no runs");
  const torch::NoGradGuard no_grad;
  for (auto& named : pack.named_parameters()) {
    std::vector<torch::Tensor> each;
    for (const torch::nn::Module* run : runs) {
      each.push_back(parameter_named(*run, named.key(), "stack_runs"));
      if (each.back().sizes() != each.front().sizes()) {
        throw std::invalid_argument("stack_runs: parameter '" + named.key() +
                                    "' differs in shape between runs");
      }
    }
    named.value().set_data(torch::stack(each).to(named.value().device()));
  }
  for (const auto& buffer : pack.named_buffers()) {
    for (const torch::nn::Module* run : runs) {
      const auto their_buffers = run->named_buffers();
      const torch::Tensor* theirs = their_buffers.find(buffer.key());
      if (!theirs || !torch::equal(theirs->to(buffer.value().device()), buffer.value())) {
        throw std::invalid_argument("stack_runs: buffer '" + buffer.key() +
                                    "' differs between runs (buffers are not stacked)");
      }
    }
  }
}

void copy_run(const torch::nn::Module& pack, int64_t run, torch::nn::Module& lone) {
  const torch::NoGradGuard no_grad;
  for (auto& named : lone.named_parameters()) {
    const torch::Tensor stacked = parameter_named(pack, named.key(), "copy_run");
    if (stacked.dim() != named.value().dim() + 1 || run < 0 || run >= stacked.size(0) ||
        stacked[run].sizes() != named.value().sizes()) {
      throw std::invalid_argument("copy_run: parameter '" + named.key() +
                                  "' is not the lone one stacked, or run " + std::to_string(run) +
                                  " is not among its runs");
    }
    named.value().copy_(stacked[run]);
  }
}

}  // namespace minrnn::core
