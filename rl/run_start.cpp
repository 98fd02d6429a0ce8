#include "rl/run_start.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <string>

#include "datasets/catalog.h"
#include "io/progress_line.h"
#include "ops/device.h"
#include "rl/checkpoint.h"

namespace minrnn::rl {

namespace fs = std::filesystem;

// A config whose training cannot fit in this machine's memory (n_layers 100 000, embed_dim 65 536)
// is refused naming its keys, before the model is built: built, it grew until the kernel's OOM
// killer ended it. A lower bound (rl/agent.h's weights; on the CPU their gradients and AdamW's
// two moments too, and one activation a layer), so a config that fits is never refused.
double min_training_bytes(const TrainConfig& c, int64_t obs_dim, int64_t act_dim, bool on_cpu) {
  const double activations = static_cast<double>(c.batch_size) * 3.0 *
                             static_cast<double>(c.context_len) * static_cast<double>(c.embed_dim) *
                             static_cast<double>(c.n_layers);
  return 4 *
         (min_model_weights(c, obs_dim, act_dim) * (on_cpu ? 4 : 1) + (on_cpu ? activations : 0));
}

double machine_memory_bytes() {
  const double pages = static_cast<double>(sysconf(_SC_PHYS_PAGES));
  return pages > 0 ? pages * static_cast<double>(sysconf(_SC_PAGE_SIZE)) : 0;
}

std::string memory_shortfall(double bytes) {
  const double memory = machine_memory_bytes();
  if (memory <= 0 || bytes <= memory) return "";
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  char text[160];
  std::snprintf(text, sizeof text,
                "at least %.1f GiB, more than this machine's %.1f GiB of memory; lower them",
                bytes / kGiB, memory / kGiB);
  return text;
}

bool is_out_of_memory(const std::exception& e) {
  const std::string what = e.what();
  return dynamic_cast<const std::bad_alloc*>(&e) != nullptr ||
         what.find("out of memory") != std::string::npos ||
         what.find("tried to allocate") != std::string::npos;
}

void check_fits_in_memory(const TrainConfig& c, int64_t obs_dim, int64_t act_dim, bool on_cpu) {
  const std::string shortfall = memory_shortfall(min_training_bytes(c, obs_dim, act_dim, on_cpu));
  if (shortfall.empty()) return;
  throw std::invalid_argument("n_layers " + std::to_string(c.n_layers) + ", embed_dim " +
                              std::to_string(c.embed_dim) + ", max_ep_len " +
                              std::to_string(c.max_ep_len) +
                              (on_cpu ? ", batch_size " + std::to_string(c.batch_size) +
                                            ", context_len " + std::to_string(c.context_len)
                                      : std::string()) +
                              ": training needs " + shortfall);
}

Agent new_agent(const TrainConfig& cfg, const DatasetEnv& env, const data::Dataset& ds,
                const torch::Device& device) {
  torch::manual_seed(static_cast<uint64_t>(cfg.seed));
  Agent agent;
  agent.config = cfg;
  agent.env = env.env;
  if (env.has_ref_scores) {
    agent.ref_min_score = env.ref_min_score;
    agent.ref_max_score = env.ref_max_score;
    agent.ref_source = env.ref_source;
  }
  agent.model = DecisionModel(model_options(cfg, ds.data.obs_dim, ds.data.act_dim));
  agent.model->to(device);
  agent.state_mean = torch::tensor(ds.index.state_mean);
  agent.state_std = torch::tensor(ds.index.state_std);
  return agent;
}

int64_t resume(const RunFiles& files, const RunDirTakeover& takeover, const torch::Device& device,
               Agent& agent, torch::optim::Optimizer& optimizer, bool quiet) {
  const long long max_steps = agent.config.max_steps, extended_from = takeover.extended_from;
  if (takeover.remove_outputs) return 0;  // --force: the old run's checkpoint is about to go
  if (!fs::exists(files.checkpoint)) {
    if (!quiet && extended_from > 0) {
      std::fprintf(stderr,
                   "%s has no checkpoint to extend from: training it again from step 0 to "
                   "max_steps %lld (what it reported at %lld is kept as *-step%lld files)\n",
                   files.dir.c_str(), max_steps, extended_from, extended_from);
    }
    return 0;
  }
  // A file cut short or damaged says the way on (a walk, 2026-11-30: a sweep failed the run at
  // every start, its log saying none); an error of the load itself (a lock, CUDA's memory) names
  // no remedy that would throw a good checkpoint away.
  const std::string checkpoint = files.checkpoint.string();
  Agent saved = [&] {
    try {
      return load_agent(checkpoint, device);
    } catch (const NotWholeCheckpoint& e) {
      throw std::runtime_error(
          std::string(e.what()) +
          ". Move it away to train the run again from step 0, or pass --force");
    }
  }();
  // config.yaml may say another config than the checkpoint holds (edited by hand): its weights
  // would not fit (in LibTorch's words) or train on under other settings. max_steps may grow.
  if (const std::string differ = trained_config_differences(saved.config, agent.config);
      !differ.empty()) {
    throw std::runtime_error(checkpoint + " was trained with another config (" + differ +
                             ") than " + files.config.filename().string() +
                             " and this command say; use another --run-dir or --force");
  }
  load_optimizer_state(checkpoint, device, optimizer);
  torch::NoGradGuard no_grad;
  auto src = saved.model->named_parameters();
  for (auto& p : agent.model->named_parameters()) p.value().copy_(src[p.key()]);
  agent.step = saved.step;
  if (!quiet && extended_from > 0) {
    std::fprintf(stderr, "extending %s from step %lld (max_steps %lld -> %lld)\n",
                 files.dir.c_str(), static_cast<long long>(agent.step), extended_from, max_steps);
  } else if (!quiet) {
    std::fprintf(stderr, "resuming %s from step %lld\n", files.dir.c_str(),
                 static_cast<long long>(agent.step));
  }
  return agent.step;
}

data::TrajectorySampler make_sampler(const TrainConfig& cfg, const data::Dataset& ds) {
  data::SamplerOptions so;
  so.batch_size = static_cast<int>(cfg.batch_size);
  so.context_len = static_cast<int>(cfg.context_len);
  so.top_fraction = cfg.top_fraction;
  return data::TrajectorySampler(ds.data, ds.index, so);
}

double warmup_lr(const TrainConfig& cfg, int64_t step) {
  return cfg.lr * std::min(1.0, double(step + 1) / double(std::max<int64_t>(1, cfg.warmup_steps)));
}

void note_config_against_data(const TrainConfig& c, const data::Dataset& ds) {
  io::ProgressLine& line = io::ProgressLine::on_stderr();
  if (const std::string lookalike = data::d4rl_lookalike_note(c.dataset, data::made_by_minrnn(ds));
      !lookalike.empty())
    line.message("note: " + lookalike);
  if (c.matmul_precision != "fp32" && !core::names_cuda(c.device)) {
    line.message("note: matmul_precision " + c.matmul_precision +
                 " is for CUDA's tensor cores; on " + c.device +
                 " the products are fp32 all the same");
  }
  const int64_t longest = ds.index.stats.max_length;
  if (longest > c.max_ep_len + 1) {
    line.message("note: max_ep_len " + std::to_string(c.max_ep_len) +
                 " is below the data's longest episode (" + std::to_string(longest) +
                 " steps): its later timesteps share the last timestep embedding");
  }
  if (c.warmup_steps > c.max_steps) {
    char lr[32];
    std::snprintf(lr, sizeof lr, "%.3g", warmup_lr(c, c.max_steps - 1));
    line.message("note: warmup_steps " + std::to_string(c.warmup_steps) + " > max_steps " +
                 std::to_string(c.max_steps) + ": the learning rate ends at " + lr +
                 ", never reaching lr");
  }
}

}  // namespace minrnn::rl
