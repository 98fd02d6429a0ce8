// Planning a sweep's runs: which (dataset, backbone, seed) runs exist, where, with which config,
// and how far each has got (sweep/sweep.h; the file itself is read by sweep_file.cpp). run_sweep
// (sweep.cpp) and the Slurm backend (sweep/slurm.cpp) both start from plan_sweep.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <stdexcept>

#include "datasets/catalog.h"
#include "datasets/env_table.h"
#include "eval/sweep_runs.h"
#include "ops/device.h"
#include "rl/agent.h"
#include "rl/checkpoint.h"
#include "rl/config.h"
#include "rl/run_dir.h"
#include "rl/run_files.h"
#include "rl/stacked_pack.h"
#include "rl/trainer.h"
#include "rl/training_run.h"
#include "sweep/slurm.h"
#include "sweep/sweep.h"

namespace minrnn::sweep {

std::string why_a_sweeps_own_key(const SweepSpec& spec, const std::string& set) {
  const std::string key = rl::override_key(set);
  if (key == "backbone")
    return "the sweep's `backbones` sets each run's backbone; list the backbones there";
  if (key == "seed") return "the sweep's `seeds` sets each run's seed; list the seeds there";
  if (key == "dataset" && spec.datasets.size() > 1 && set.find("{dataset}") == std::string::npos) {
    return "every dataset label of `datasets` would train on this one dataset; name each "
           "label's with {dataset} in the value, or sweep one label";
  }
  return "";
}

namespace {

namespace fs = std::filesystem;

RunState read_state(const std::string& run_dir) {
  const rl::RunFiles files(run_dir);
  if (!fs::exists(files.done)) return RunState::kPending;
  return fs::exists(files.result) ? RunState::kDone : RunState::kTrained;
}

void refuse_per_run_overrides(const SweepSpec& spec) {
  for (const std::string& set : spec.sets) {
    if (const std::string why = why_a_sweeps_own_key(spec, set); !why.empty())
      throw std::invalid_argument(spec.file + ": set/--set '" + set + "': " + why);
  }
}

// Why run `r`'s eval.json is no result of this sweep ("" when it is one, or the run has none);
// `unreadable` where it is none at all.
std::string stale_evaluation(const SweepSpec& spec, const SweepRun& r, bool* unreadable) {
  if (r.state != RunState::kDone) return "";
  const eval::FinalEvaluation e = eval::read_final_evaluation(r.run_dir);
  *unreadable = !e.unreadable.empty();
  if (*unreadable) return e.unreadable;
  if (e.episodes >= 0 && e.episodes != spec.eval_episodes) {
    return "eval_episodes: " + std::to_string(e.episodes) + " -> " +
           std::to_string(spec.eval_episodes);
  }
  // Episodes other than the sweep's (a walk, 2026-11-30: `eval --seed 12345 --replace` went into
  // Table 3 unmarked).
  if (e.seed != eval::kFinalEvaluationSeed) {
    return "evaluation seed: " + std::to_string(e.seed) + " -> " +
           std::to_string(eval::kFinalEvaluationSeed);
  }
  return "";
}

}  // namespace

bool on_cuda(const std::string& device) {
  return core::names_cuda(device) || (device == "auto" && core::cuda_unavailable_reason().empty());
}

bool evaluates_beside_training(const std::vector<SweepRun>& runs) {
  std::set<std::string> devices;  // each asked once: `auto` asks CUDA
  for (const SweepRun& r : runs)
    if (r.state == RunState::kPending) devices.insert(r.device);
  return !devices.empty() && std::all_of(devices.begin(), devices.end(), on_cuda);
}

namespace {

// `runs` split evenly into packs of at most `limit`: the size of each (30 at 16: 15).
size_t even_share(size_t runs, size_t limit) {
  const size_t packs = (runs + limit - 1) / limit;
  return (runs + packs - 1) / packs;
}

}  // namespace

int pack_limit(const SweepSpec& spec, const std::string& device) {
  if (spec.pack > 0) return spec.pack;
  return on_cuda(device) ? kAutoGpuPack : 1;
}

int stacked_pack_limit(const SweepSpec& spec) {
  return spec.pack > 0 ? spec.pack : kAutoStackedPack;
}

std::string pack_limit_text(const SweepSpec& spec, const std::string& device) {
  const int limit = pack_limit(spec, device), stacked = stacked_pack_limit(spec);
  if (stacked == limit || !on_cuda(device) || !rl::packs_stack(true)) return std::to_string(limit);
  return std::to_string(limit) + " (" + std::to_string(stacked) +
         " where a pack is one stacked model)";
}

std::string stack_key(const SweepRun& run) {
  return run.stack_shape.empty() ? "config " + run.config : run.stack_shape;
}

std::vector<std::vector<int>> group_packs(const SweepSpec& spec, const std::vector<SweepRun>& runs,
                                          const std::vector<int>& indices) {
  // One command line trains a pack (pack_train_args): what it passes to all its runs must agree.
  const auto can_share = [&](const SweepRun& a, const SweepRun& b) {
    return a.overrides == b.overrides && a.device == b.device &&
           a.matmul_precision == b.matmul_precision && a.extend == b.extend;
  };
  std::vector<std::vector<int>> packs;
  std::vector<bool> taken(indices.size(), false);
  for (size_t i = 0; i < indices.size(); ++i) {
    if (taken[i]) continue;
    taken[i] = true;
    const SweepRun& first = runs[size_t(indices[i])];
    const auto stacks_with_first = [&](const SweepRun& r) {
      return can_share(first, r) && stack_key(r) == stack_key(first);
    };
    size_t limit = size_t(pack_limit(spec, first.device));
    // Where packs stack (rl/trainer.h), a pack holds one stack shape, up to kAutoStackedPack
    // under `pack: auto`, split evenly: 45 runs as 23 + 22, not 32 + 13 (each stacked model at
    // its most runs), nor topped up with other shapes' runs (a group of one or two stacks little
    // and leaves its shape's others fewer).
    const bool stacking =
        limit > 1 && first.stacks && on_cuda(first.device) && rl::packs_stack(true);
    if (stacking) {
      limit = size_t(stacked_pack_limit(spec));
      size_t shape_runs = 1;
      for (size_t j = i + 1; j < indices.size(); ++j)
        shape_runs += !taken[j] && stacks_with_first(runs[size_t(indices[j])]);
      limit = even_share(shape_runs, limit);
    }
    std::vector<int> pack = {indices[i]};
    // Its config's runs, then its stack shape's, then (packs of streams) any.
    const std::function<bool(const SweepRun&)> passes[] = {
        [&](const SweepRun& r) { return can_share(first, r) && r.config == first.config; },
        stacks_with_first, [&](const SweepRun& r) { return !stacking && can_share(first, r); }};
    for (const auto& wanted : passes) {
      for (size_t j = i + 1; j < indices.size() && pack.size() < limit; ++j) {
        if (taken[j] || !wanted(runs[size_t(indices[j])])) continue;
        taken[j] = true;
        pack.push_back(indices[j]);
      }
    }
    packs.push_back(std::move(pack));
  }
  return packs;
}

std::vector<std::string> pack_train_args(
    const std::vector<SweepRun>& runs, const std::vector<int>& pack,
    const std::function<std::string(const std::string&)>& path) {
  const SweepRun& first = runs[size_t(pack[0])];
  std::vector<std::string> args = {"train", path(first.config)};
  bool one_config = true;
  for (int i : pack) one_config = one_config && runs[size_t(i)].config == first.config;
  for (size_t k = 1; k < pack.size() && !one_config; ++k)
    args.push_back(path(runs[size_t(pack[k])].config));
  for (int i : pack) {
    args.insert(args.end(), {"--seed", std::to_string(runs[size_t(i)].seed), "--run-dir",
                             path(runs[size_t(i)].run_dir)});
  }
  args.push_back("--quiet");
  for (const auto& o : first.overrides) args.insert(args.end(), {"--set", o});
  if (first.extend) args.push_back("--extend");
  return args;
}

namespace {

// The config of `backbone`'s runs from `path` with `overrides`, `backbone=` put first among them
// only where the file names another backbone (a template shared by the sweep's backbones): with
// one config file per backbone, the runs of different backbones then pass the same overrides and
// can share a pack (group_packs). Throws naming the file or the override.
rl::TrainConfig config_naming(const std::string& path, const std::string& backbone,
                              std::vector<std::string>& overrides) {
  try {
    rl::TrainConfig config = rl::load_config(path, overrides);
    if (config.backbone == backbone) return config;
  } catch (const std::invalid_argument&) {
    // Not without the backbone, perhaps; the load below says what is wrong if not that.
  }
  overrides.insert(overrides.begin(), "backbone=" + backbone);
  return rl::load_config(path, overrides);
}

// rl::stack_shape of a config's runs, their env's widths from its env or dataset name; "" where
// neither names one of the envs.
std::string stack_shape_of(const rl::TrainConfig& config) {
  const data::EnvInfo* env = data::find_env(config.env);
  if (env == nullptr) env = data::guess_env_from_name(config.dataset);
  if (env == nullptr) return "";
  return rl::stack_shape(rl::model_options(config, env->obs_dim, env->act_dim), config);
}

// A cell's override refused by range, said as the sweep file's `set` entry unless the command
// line's --set gave the key (that one stays a RefusedOverride: a usage error).
[[noreturn]] void refuse_in_cell(const SweepSpec& spec, const rl::RefusedOverride& refused,
                                 const std::vector<std::string>& overrides,
                                 const std::string& where) {
  if (!rl::override_of(spec.command_sets, refused.key).empty())
    throw rl::RefusedOverride(refused.key, refused.reason, where + refused.what());
  const std::string entry = rl::override_of(overrides, refused.key);
  if (entry.empty()) throw std::invalid_argument(where + refused.what());
  // Not the file's `set` either: the cell's own value (its backbone), named in `where`.
  if (rl::override_of(spec.sets, refused.key).empty())
    throw std::invalid_argument(where + refused.key + " " + refused.reason);
  throw std::invalid_argument(where + "key 'set': '" + entry + "': " + refused.reason);
}

// The run of one (dataset, backbone) cell, all but its seed; `config` gets the config it resolves.
SweepRun cell_run(const SweepSpec& spec, const std::string& dataset, const std::string& backbone,
                  rl::TrainConfig& config) {
  SweepRun proto;
  proto.dataset = dataset;
  proto.backbone = backbone;
  proto.config =
      (fs::path(spec.file).parent_path() / fill_cell(spec.config_template, dataset, backbone))
          .lexically_normal();
  if (!fs::exists(proto.config)) {
    throw std::invalid_argument(spec.file + ": key 'config': " + proto.config +
                                " does not exist (dataset " + dataset + ", backbone " + backbone +
                                ")");
  }
  for (const auto& s : spec.sets) proto.overrides.push_back(fill_cell(s, dataset, backbone));
  // The sweep file's `set:` and the command line's --set reach the config as one list of
  // overrides: the file and the cell named, the config's words after them.
  const auto where = [&] {
    return spec.file + ": dataset " + dataset + ", backbone " + backbone + " (config " +
           proto.config + (spec.sets.empty() ? "" : ", with the sweep's set/--set") + "): ";
  };
  try {
    config = config_naming(proto.config, backbone, proto.overrides);
  } catch (const rl::RefusedOverride& e) {
    refuse_in_cell(spec, e, proto.overrides, where());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where() + e.what());
  }
  proto.max_steps = config.max_steps;
  proto.eval_every = config.eval_every;
  proto.device = config.device;
  proto.matmul_precision = config.matmul_precision;
  proto.dataset_source = config.dataset;
  proto.stack_shape = stack_shape_of(config);
  proto.stacks = rl::stack_refusal(rl::model_options(config, 0, 0)).empty();
  const data::DatasetLocation data = data::locate_dataset(proto.dataset_source);
  proto.dataset_where = data.where;
  proto.data_missing = !data.present;
  proto.data_downloadable = data.downloadable;
  return proto;
}

// The refusal of a sweep whose run directories hold other configs (`conflicts`: a line each).
std::invalid_argument config_conflicts(const SweepSpec& spec, const std::string& conflicts,
                                       bool extendable) {
  return std::invalid_argument(
      spec.file +
      ": these run directories were trained with another config than the sweep's "
      "(run's value -> sweep's); move them away, or give the sweep another `out`" +
      (extendable ? std::string(", or pass --extend to train the ones whose only change is "
                                "a larger max_steps further from their checkpoints")
                  : std::string()) +
      ":" + conflicts);
}

// A run going on from its run dir loads its checkpoint (to resume or to evaluate) and reads the
// data it trained on (rl::check_same_data, as it starts): asked here, a checkpoint cut short, or
// a regenerated or moved dataset, stops the sweep before any run starts and the plan names the
// run (a walk, 2026-11-30: each such run was started and failed, again at every sweep). The data
// is read only with `read_data` (a sweep about to start: each dataset once, for the runs that go
// on from an env.json; one that does not load marks every run still to train on it
// data_unreadable, which refuse_missing_datasets names), never for --status, which reads the run
// dirs alone. The refusal's lines ("" when every run can go on).
std::string mark_runs_that_cannot_go_on(std::vector<SweepRun>& runs, bool read_data) {
  std::string lines;
  const auto cannot_go_on = [&](SweepRun& r, const std::string& why) {
    r.mismatch = why;
    r.cannot_go_on = true;
    lines += "\n  " + why;  // naming its file: the run dir
  };
  for (SweepRun& r : runs) {
    const fs::path checkpoint = rl::RunFiles(r.run_dir).checkpoint;
    if (r.state == RunState::kDone || !r.mismatch.empty() || !fs::exists(checkpoint)) continue;
    // Its entries' CRCs only as a sweep starts (read_data): --status reads a few bytes a run.
    const std::string why = rl::why_not_whole_archive(checkpoint.string(), read_data);
    if (!why.empty()) {
      cannot_go_on(r, checkpoint.string() + ": " + why +
                          "; move it away and the run trains again from step 0");
    }
  }
  if (!read_data) return lines;
  const auto goes_on = [](const SweepRun& r) {
    return r.state == RunState::kPending && r.mismatch.empty() && !r.data_missing &&
           fs::exists(rl::RunFiles(r.run_dir).env);
  };
  std::vector<std::string> sources;
  for (const SweepRun& r : runs) {
    if (goes_on(r) && std::find(sources.begin(), sources.end(), r.dataset_source) == sources.end())
      sources.push_back(r.dataset_source);
  }
  for (const std::string& source : sources) {
    std::shared_ptr<const data::Dataset> data;
    try {
      data = rl::load_training_data(source);
    } catch (const std::exception& e) {
      for (SweepRun& r : runs) {
        if (r.dataset_source != source || r.state != RunState::kPending) continue;
        r.data_unreadable = e.what();
        r.data_damaged = says_contents_damaged(e);
      }
      continue;
    }
    for (SweepRun& r : runs) {
      if (r.dataset_source != source || !goes_on(r)) continue;
      const rl::OtherData other = rl::why_other_data(rl::RunFiles(r.run_dir), *data);
      if (other.why.empty()) continue;
      cannot_go_on(
          r, other.why + (other.record_damaged ? "; delete it to go on with this dataset"
                                               : "; put that data back, or move the run's folder " +
                                                     r.run_dir + " away"));
    }
  }
  return lines;
}

}  // namespace

std::vector<SweepRun> plan_sweep(const SweepSpec& spec, PlanMismatches mismatches) {
  refuse_per_run_overrides(spec);
  std::vector<SweepRun> protos;  // one per (dataset, backbone)
  std::vector<rl::TrainConfig> configs;
  for (const auto& dataset : spec.datasets) {
    for (const auto& backbone : spec.backbones) {
      configs.emplace_back();
      protos.push_back(cell_run(spec, dataset, backbone, configs.back()));
    }
  }
  // Seed-major: a sweep stopped part-way has every (dataset, backbone) cell at its first seeds.
  std::vector<SweepRun> runs;
  std::string conflicts;  // run dirs holding another config than the sweep's
  int extendable = 0;     // of them, those that differ only by a smaller max_steps
  std::string stale;      // finished runs whose eval.json is no result of the sweep's
  for (int64_t seed : spec.seeds) {
    for (size_t i = 0; i < protos.size(); ++i) {
      SweepRun r = protos[i];
      r.seed = seed;
      r.run_dir = eval::run_dir_of(spec.out, r.dataset, r.backbone, seed).string();
      r.state = read_state(r.run_dir);
      rl::TrainConfig wanted = configs[i];  // what `minrnn train --seed S` will resolve
      wanted.seed = seed;
      const rl::StoredConfig stored = rl::compare_stored_config(r.run_dir, wanted);
      if (stored.max_steps_grows && spec.extend) {
        r.extend = true;
        r.state = RunState::kPending;  // done.json, if any, is moved aside when training starts
      } else if (!stored.differences.empty()) {
        conflicts += "\n  " + r.run_dir + ": " + stored.differences;
        extendable += stored.max_steps_grows;
        r.mismatch = stored.differences;
        r.mismatch_extends = stored.max_steps_grows;
      }
      bool unreadable = false;
      if (const std::string why = stale_evaluation(spec, r, &unreadable); !why.empty()) {
        stale += "\n  " + rl::RunFiles(r.run_dir).result.string() + ": " + why;
        if (r.mismatch.empty()) {
          r.mismatch = "eval.json: " + why;
          r.mismatch_in_result = true;
          r.result_unreadable = unreadable;
        }
      }
      runs.push_back(r);
    }
  }
  const std::string cannot_go_on =
      mark_runs_that_cannot_go_on(runs, mismatches == PlanMismatches::kRefuse);
  if (mismatches == PlanMismatches::kReport) return runs;
  if (!conflicts.empty()) throw config_conflicts(spec, conflicts, extendable > 0);
  if (!cannot_go_on.empty()) {
    throw std::invalid_argument(spec.file +
                                ": these runs cannot go on from their run dirs (or give the sweep "
                                "another `out`); nothing was started:" +
                                cannot_go_on);
  }
  if (!stale.empty()) {
    throw std::invalid_argument(
        spec.file + ": these runs' eval.json is not the sweep's evaluation (run's -> sweep's); " +
        eval::kResultAwayAdvice + ", or give the sweep another `out`:" + stale);
  }
  return runs;
}

}  // namespace minrnn::sweep
