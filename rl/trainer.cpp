#include "rl/trainer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>

#include "datasets/episodes.h"
#include "io/atomic_file.h"
#include "io/env_switch.h"
#include "ops/side_work.h"
#include "rl/run_dir.h"
#include "rl/run_files.h"
#include "rl/run_start.h"
#include "rl/stacked_pack.h"
#include "rl/training_run.h"

namespace minrnn::rl {

namespace fs = std::filesystem;

void append_eval_row(const std::string& run_dir, const EvalRow& r) {
  const fs::path path = RunFiles(run_dir).evals;
  const RunRow row{r.step,
                   {static_cast<double>(r.step), r.mean_return, r.std_return, r.mean_normalized,
                    r.std_normalized}};  // evals_columns(), in order
  // A new file starts with its header, as metrics.csv does; one of a run from before the header
  // (its rows alone) goes on without one, so that its rows all read alike.
  std::error_code ec;
  const bool fresh = !fs::exists(path, ec) || fs::file_size(path, ec) == 0;
  const std::string header = fresh ? header_line(evals_columns()) : "";
  // Whole lines only: a kill can tear at most this one, which readers and resume skip; a failed
  // write (disk full) is taken back and reported naming the file.
  io::append_to_file(path.string(), header + row_line(row, "%.3f"));
}

std::string default_run_dir(const std::string& config_path, int64_t seed) {
  return (fs::path("runs") / (fs::path(config_path).stem().string() + "-s" + std::to_string(seed)))
      .string();
}

TrainResult train(const TrainConfig& config, const TrainOptions& options) {
  TrainingRun run(config, options);
  try {
    while (!run.stepped_out()) run.step();
    return run.finish();
  } catch (...) {
    run.failed();
    throw;
  }
}

bool packs_stack(bool on_cuda) {
  return io::env_switch("MINRNN_STACKED_PACK", on_cuda, "0", "1",
                        "1 (stack a pack's runs of one shape) or 0 (a stream a run)");
}

bool side_work_for(bool one_model) {
  return core::side_work_asked(one_model);
}

namespace {

// An allocation a stacked pack could not make says how to make the pack fit (LibTorch's message
// names only bytes; every run of the pack shares it); any other error goes on as it was.
[[noreturn]] void throw_with_pack_size(const std::exception& e, size_t runs) {
  if (!is_out_of_memory(e)) throw;
  throw std::runtime_error("a stacked pack of " + std::to_string(runs) +
                           " runs ran out of memory: train fewer runs a process (a sweep's `pack: "
                           "N` or --pack N; MINRNN_STACKED_PACK=0 steps each run on a stream of "
                           "its own) (" +
                           e.what() + ")");
}

// A pack's runs as train_pack steps them: each alone, or the runs of one shape as one stacked
// model (one group a shape, its pack rebuilt whenever a run leaves it).
class PackSteps {
 public:
  PackSteps(std::vector<std::unique_ptr<TrainingRun>>& runs, bool stacked, StepMode mode)
      : runs_(runs), mode_(mode) {
    group_of_.assign(runs.size(), -1);
    if (!stacked) return;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (!runs[i] || runs[i]->stepped_out()) continue;
      for (size_t g = 0; g < groups_.size() && group_of_[i] < 0; ++g) {
        const Agent& first = runs[groups_[g].members[0]]->agent();
        if (why_not_stacked({&first, &runs[i]->agent()}).empty()) join(i, g);
      }
      if (group_of_[i] < 0) {
        groups_.emplace_back();
        join(i, groups_.size() - 1);
      }
    }
  }

  // One step of every run still training; false when none is. `fail` takes a run that threw.
  bool step_all(const std::function<void(size_t, const std::exception&)>& fail) {
    bool stepped = false;
    for (Group& g : groups_) stepped |= step_group(g, fail);
    for (size_t i = 0; i < runs_.size(); ++i) {
      if (group_of_[i] >= 0 || !runs_[i] || runs_[i]->stepped_out()) continue;
      try {
        runs_[i]->step();
        stepped = true;
      } catch (const std::exception& e) {
        fail(i, e);
      }
    }
    return stepped;
  }

  // Run i is dropped (it failed): its group's pack, which the others use to the end of this
  // round, is made again without it at their next step.
  void release(size_t i) { group_of_[i] = -1; }
  // Every run's weights back in it, its own steps from then on: before the runs finish.
  void release_all() {
    for (Group& g : groups_) dissolve(g);
  }

 private:
  struct Group {
    std::vector<size_t> members;  // runs of one shape, while they train
    std::unique_ptr<StackedPack> pack;
  };

  void join(size_t i, size_t g) {
    groups_[g].members.push_back(i);
    group_of_[i] = static_cast<int>(g);
  }

  void dissolve(Group& g) {
    if (!g.pack) return;
    for (size_t i : g.members) {
      if (runs_[i]) runs_[i]->leave_pack();
    }
    g.pack.reset();
  }

  // The group's runs still training, its pack made for them where they changed; one step of
  // each. A group down to one run leaves it to step alone.
  bool step_group(Group& g, const std::function<void(size_t, const std::exception&)>& fail) {
    std::vector<size_t> live;
    for (size_t i : g.members) {
      if (runs_[i] && !runs_[i]->stepped_out()) live.push_back(i);
    }
    if (live != g.members || !g.pack) {
      dissolve(g);
      g.members = live;
    }
    if (g.members.size() < 2) {
      for (size_t i : g.members) group_of_[i] = -1;
      g.members.clear();
      return false;
    }
    std::vector<TrainingRun::StepInputs> in;
    for (size_t i : g.members) {
      const auto prepared = runs_[i]->prepare_step();
      if (!prepared) return true;  // a stop signal: every run checkpoints and steps out
      in.push_back(*prepared);
    }
    std::vector<const data::SequenceBatch*> batches;
    std::vector<double> lrs;
    std::vector<uint64_t> bases;
    for (const auto& x : in) {
      batches.push_back(x.batch);
      lrs.push_back(x.lr);
      bases.push_back(x.dropout_base);
    }
    try {
      if (!g.pack) make_pack(g);
      g.pack->run(batches, lrs, bases);
    } catch (const std::exception& e) {
      throw_with_pack_size(e, g.members.size());
    }
    for (size_t i : std::vector<size_t>(g.members)) {
      try {
        runs_[i]->complete_step();
      } catch (const std::exception& e) {
        fail(i, e);
      }
    }
    return true;
  }

  void make_pack(Group& g) {
    std::vector<Agent*> agents;
    std::vector<core::FusedAdamW*> optimizers;
    for (size_t i : g.members) {
      agents.push_back(&runs_[i]->agent());
      optimizers.push_back(&runs_[i]->optimizer());
    }
    const torch::Device device = agents[0]->model->parameters().front().device();
    g.pack = std::make_unique<StackedPack>(agents, optimizers, device, mode_);
    for (size_t k = 0; k < g.members.size(); ++k) {
      runs_[g.members[k]]->join_pack(*g.pack, static_cast<int64_t>(k));
    }
  }

  std::vector<std::unique_ptr<TrainingRun>>& runs_;
  StepMode mode_;
  std::vector<Group> groups_;
  std::vector<int> group_of_;  // each run's group, or -1: it steps alone
};

}  // namespace

std::vector<TrainResult> train_pack(const std::vector<PackMember>& members) {
  // Read (a bad MINRNN_STACKED_PACK refused) before any run dir changes.
  const bool stacks_on_cuda = packs_stack(true), stacks_on_cpu = packs_stack(false);
  std::vector<TrainResult> results(members.size());
  std::vector<std::unique_ptr<TrainingRun>> runs(members.size());
  std::unique_ptr<PackSteps> steps;
  auto fail = [&](size_t i, const std::exception& e) {
    results[i].error = e.what();
    if (steps) steps->release(i);
    if (runs[i]) runs[i]->failed();
    runs[i].reset();  // its lock goes; its last checkpoint stays what it was
    std::fprintf(stderr, "minrnn train: %s failed: %s (the pack's other runs go on)\n",
                 members[i].options.run_dir.c_str(), e.what());
  };
  std::map<std::string, std::shared_ptr<const data::Dataset>> loaded;  // by dataset id or path
  for (size_t i = 0; i < members.size(); ++i) {
    try {
      // LibTorch holds the matmul precision for the whole process
      // (core::set_cuda_matmul_precision).
      const std::string& precision = members[0].config.matmul_precision;
      if (members[i].config.matmul_precision != precision) {
        throw std::invalid_argument("matmul_precision " + members[i].config.matmul_precision +
                                    " differs from the pack's first run's (" + precision +
                                    "): one process computes in one precision");
      }
      auto& data = loaded[members[i].config.dataset];
      if (!data) data = load_training_data(members[i].config.dataset);
      TrainOptions options = members[i].options;
      options.finished_is_done = true;
      options.in_pack = true;
      runs[i] = std::make_unique<TrainingRun>(members[i].config, options, data);
    } catch (const std::exception& e) {
      fail(i, e);
    }
  }
  const bool graphs = members.empty() || members[0].options.cuda_graph;
  // The runs' device (one process trains on one: pack_train_args), from the first with steps
  // left: a run already finished has no model loaded (TrainingRun: kAlreadyTrained).
  const auto first = std::find_if(runs.begin(), runs.end(),
                                  [](const auto& r) { return r != nullptr && !r->stepped_out(); });
  const bool on_cuda =
      first != runs.end() && (*first)->agent().model->parameters().front().is_cuda();
  steps = std::make_unique<PackSteps>(runs, on_cuda ? stacks_on_cuda : stacks_on_cpu,
                                      graphs ? StepMode::kGraph : StepMode::kEager);
  while (steps->step_all(fail)) {
  }
  steps->release_all();
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i]) continue;
    try {
      results[i] = runs[i]->finish();
    } catch (const std::exception& e) {
      fail(i, e);
    }
  }
  return results;
}

}  // namespace minrnn::rl
