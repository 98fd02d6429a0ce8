#include "sweep/estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "envs/registry.h"
#include "infer/policy.h"
#include "io/csv.h"
#include "io/name_list.h"
#include "ops/device.h"
#include "rl/config.h"
#include "rl/dataset_env.h"
#include "rl/trainer.h"

namespace minrnn::sweep {
namespace {

std::string device_kind(const std::string& device) {
  return core::names_cuda(device) ? "cuda" : "cpu";
}

void read_pack_rows(const io::CsvTable& csv, MeasuredRates& out) {
  using namespace pack_csv;
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    PackRate r;
    r.device_kind = device_kind(csv.text(i, kDevice));
    r.machine = csv.text(i, kMachine);
    r.step = csv.text(i, kStep);
    r.shape.backbone = csv.text(i, kBackbone);
    r.shape.batch = csv.count(i, kBatch);
    r.shape.context = csv.count(i, kContext);
    r.shape.embed = csv.count(i, kEmbed);
    r.shape.layers = csv.count(i, kLayers);
    r.shape.expansion = csv.number_or(i, kExpansion, "1", true);
    r.shape.matmul_precision = csv.text_or(i, kMatmulPrecision, "fp32");
    r.pack = static_cast<int>(csv.count(i, kPack));
    r.run_steps_per_s = csv.number(i, kRunStepsPerS, true);
    out.packs.push_back(r);
  }
}

void read_eval_rows(const io::CsvTable& csv, MeasuredRates& out) {
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    EvalRate r;
    r.machine = csv.text(i, "machine");
    r.policy = csv.text(i, "policy");
    r.batching = csv.text(i, "batching");
    const std::string env = csv.text_or(i, "env", "halfcheetah");  // an older bench's only env
    try {
      r.env = envs::resolve_env(env).task.spec.name;
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(csv.where(i, "env") + ": " + e.what());
    }
    r.embed = csv.count(i, "embed");
    r.layers = csv.count(i, "layers");
    r.context = csv.count(i, "context");
    r.env_steps_per_s = csv.number(i, "env_steps_per_s", true);
    out.evals.push_back(r);
  }
}

StepShape shape_of(const rl::TrainConfig& c) {
  StepShape s;
  s.backbone = c.backbone;
  s.batch = c.batch_size;
  s.context = c.context_len;
  s.embed = c.embed_dim;
  s.layers = c.n_layers;
  s.expansion = c.expansion;
  s.matmul_precision = c.matmul_precision;
  return s;
}

// The device kind every run trains on ("auto" as `minrnn train` would resolve it here).
std::string runs_device_kind(const std::vector<SweepRun>& runs) {
  std::set<std::string> kinds;
  std::string automatic;  // resolved once, at the first run that asks for auto
  for (const SweepRun& r : runs) {
    if (r.device == "auto" && automatic.empty())
      automatic = device_kind(core::resolve_device("auto", "device").name);
    kinds.insert(r.device == "auto" ? automatic : device_kind(r.device));
  }
  if (kinds.size() > 1) {
    throw std::invalid_argument(
        "the sweep's runs train on both the CPU and CUDA: estimate them as two sweeps, or pass "
        "--set device=cpu or --set device=cuda");
  }
  return kinds.empty() ? "cpu" : *kinds.begin();
}

// The one machine `machines` name ("" for none); several are refused, as their rates don't mix.
std::string one_machine(const std::set<std::string>& machines, const std::string& what) {
  if (machines.size() <= 1) return machines.empty() ? "" : *machines.begin();
  const std::string names = io::comma_separated({machines.begin(), machines.end()});
  throw std::invalid_argument("the " + what + " rates come from several machines (" + names +
                              "): pass --rates files measured on the one machine to estimate");
}

// The bench pack rows that measured `shape` as a sweep would train it on `kind` in packs of
// `runs`, by pack size: on CUDA as one stacked model where this environment asks train_pack for
// that and the pack has runs to stack (MINRNN_STACKED_PACK=1: `bench pack --stacked`'s rows),
// else a graph a run.
std::map<int, double> measured_packs(const MeasuredRates& rates, const std::string& kind,
                                     const StepShape& shape, bool stacked) {
  std::map<int, double> by_pack;
  const std::string step = kind != "cuda" ? "eager" : stacked ? "stacked cuda graph" : "cuda graph";
  for (const PackRate& r : rates.packs)
    if (r.device_kind == kind && r.step == step && r.shape == shape)
      by_pack[r.pack] = r.run_steps_per_s;
  return by_pack;
}

// How many of `pack`'s runs train as one stacked model with runs[i] (itself included).
int stack_group_size(const std::vector<SweepRun>& runs, const std::vector<int>& pack, int i) {
  const std::string key = stack_key(runs[size_t(i)]);
  return static_cast<int>(std::count_if(pack.begin(), pack.end(),
                                        [&](int j) { return stack_key(runs[size_t(j)]) == key; }));
}

// The training of a run (its config `c`, `steps` still to do) in a pack of `n` runs, or `stacked`
// as one of a stacked model's n.
void add_training(SweepEstimate& e, const MeasuredRates& rates, const rl::TrainConfig& c, int n,
                  bool stacked, int64_t steps) {
  TrainingLine line;
  line.shape = shape_of(c);
  // A CPU's products are fp32 whatever the config asks; its bench rows say so.
  if (e.device_kind != "cuda") line.shape.matmul_precision = "fp32";
  line.stacked = stacked;
  const std::map<int, double> measured = measured_packs(rates, e.device_kind, line.shape, stacked);
  if (!measured.empty()) {
    auto at = measured.upper_bound(n);  // the first P > n; the one before it is the largest ≤ n
    line.below_measured = at == measured.begin();
    if (!line.below_measured) --at;
    line.measured_pack = at->first;
    line.run_steps_per_s = at->second;
  }
  for (TrainingLine& l : e.training) {
    // A pack that borrows a larger P's rate keeps a line of its own: its bench is its own P's.
    if (l.shape == line.shape && l.stacked == line.stacked &&
        l.below_measured == line.below_measured && (!line.below_measured || l.pack == n) &&
        l.measured_pack == line.measured_pack &&
        l.run_steps_per_s == line.run_steps_per_s) {  // (a stacked pack's rate, or the lone's)
      l.runs += 1;
      l.pack = std::max(l.pack, n);
      l.run_steps += steps;
      return;
    }
  }
  line.runs = 1;
  line.pack = n;
  line.run_steps = steps;
  e.training.push_back(line);
}

// The policy bench eval names the way a run's evaluations roll out: the packed engine, batched,
// streaming for the recurrent backbones and a re-encoded window for the Transformer.
std::string policy_prefix(const std::string& backbone) {
  return backbone + ", " + rl::eval_mode_name(rl::default_eval_mode(backbone)) + " ";
}

// The most steps an evaluation episode of the run takes: its env's time limit (rollouts run to
// it, whatever max_ep_len says); max_ep_len where no env is known.
int64_t episode_limit(const rl::TrainConfig& c, const std::string& env) {
  if (!c.env.empty()) return envs::resolve_env(c.env).task.spec.max_episode_steps;
  if (!env.empty()) return envs::env_spec(env).max_episode_steps;
  return c.max_ep_len;
}

void add_evaluation(SweepEstimate& e, const MeasuredRates& rates, const rl::TrainConfig& c,
                    int64_t episodes) {
  if (episodes == 0) return;
  const std::string env = rl::config_env_family(c);
  auto line = std::find_if(e.evaluation.begin(), e.evaluation.end(), [&](const auto& l) {
    return l.backbone == c.backbone && l.embed == c.embed_dim && l.layers == c.n_layers &&
           l.context == c.context_len && l.env == env;
  });
  if (line == e.evaluation.end()) {
    EvaluationLine l;
    l.env = env;
    l.backbone = c.backbone;
    l.embed = c.embed_dim;
    l.layers = c.n_layers;
    l.context = c.context_len;
    for (const EvalRate& r : rates.evals) {
      if (r.policy.rfind(policy_prefix(c.backbone), 0) == 0 &&
          r.policy.find("packed engine") != std::string::npos &&
          r.batching.rfind("batched", 0) == 0 && r.embed == c.embed_dim && r.layers == c.n_layers &&
          r.context == c.context_len && (env.empty() || r.env == env)) {
        l.policy = r.policy;
        l.rates_env = r.env;
        l.env_steps_per_s = r.env_steps_per_s;
      }
    }
    line = e.evaluation.insert(e.evaluation.end(), l);
  }
  line->episodes += episodes;
  line->env_steps += episodes * episode_limit(c, env);
}

// Each line's seconds (NaN without a measured rate), their sum over the lines that have one into
// `total`, and the others counted into `unmeasured`.
template <typename Line, typename Work, typename Rate>
void add_up(std::vector<Line>& lines, Work work, Rate rate, double& total, int& unmeasured) {
  for (Line& l : lines) {
    l.seconds = work(l) == 0 ? 0 : rate(l) > 0 ? static_cast<double>(work(l)) / rate(l) : NAN;
    if (std::isnan(l.seconds)) {
      ++unmeasured;
    } else {
      total += l.seconds;
    }
  }
}

}  // namespace

bool StepShape::operator==(const StepShape& o) const {
  // The Transformer has no expansion: its rows match whatever a config says of it.
  const bool expansion_matters = backbone != "transformer";
  return backbone == o.backbone && batch == o.batch && context == o.context && embed == o.embed &&
         layers == o.layers && matmul_precision == o.matmul_precision &&
         (!expansion_matters || std::abs(expansion - o.expansion) < 1e-9);
}

std::string StepShape::describe() const {
  std::ostringstream s;
  s << backbone << " embed " << embed << ", " << layers << " layers, B " << batch << ", K "
    << context;
  if (backbone != "transformer" && expansion != 1) s << ", expansion " << expansion;
  s << ", " << matmul_precision;
  return s.str();
}

MeasuredRates read_measured_rates(const std::vector<std::string>& csv_files) {
  MeasuredRates rates;
  for (const std::string& file : csv_files) {
    const io::CsvTable table = io::read_csv_table(file);
    if (table.column(pack_csv::kRunStepsPerS) >= 0) {
      read_pack_rows(table, rates);
    } else if (table.column("env_steps_per_s") >= 0 && table.column("policy") >= 0) {
      read_eval_rows(table, rates);
    } else {
      throw std::runtime_error(file +
                               ": neither bench pack's CSV (a run_steps_per_s column) nor bench "
                               "eval's (env_steps_per_s and policy)");
    }
    rates.files.push_back(file);
  }
  return rates;
}

SweepEstimate estimate_sweep(const SweepSpec& spec, const std::vector<SweepRun>& runs,
                             const MeasuredRates& rates) {
  SweepEstimate e;
  e.files = rates.files;
  e.runs = static_cast<int>(runs.size());
  e.device_kind = runs_device_kind(runs);
  std::set<std::string> pack_machines, eval_machines;
  for (const PackRate& r : rates.packs)
    if (r.device_kind == e.device_kind) pack_machines.insert(r.machine);
  for (const EvalRate& r : rates.evals) eval_machines.insert(r.machine);
  e.train_machine = one_machine(pack_machines, e.device_kind + " training");
  e.eval_machine = one_machine(eval_machines, "evaluation");
  if (e.device_kind == "cpu" && !e.train_machine.empty() && !e.eval_machine.empty() &&
      e.train_machine != e.eval_machine) {
    throw std::invalid_argument("the training rates come from " + e.train_machine +
                                " and the evaluation rates from " + e.eval_machine +
                                ": on the CPU both share one machine's cores; pass --rates "
                                "files measured on the one machine to estimate");
  }

  std::vector<rl::TrainConfig> configs;
  std::vector<int> to_train;
  for (size_t i = 0; i < runs.size(); ++i) {
    configs.push_back(rl::load_config(runs[i].config, runs[i].overrides));
    if (runs[i].state == RunState::kPending) to_train.push_back(static_cast<int>(i));
  }
  const std::vector<std::vector<int>> packs = group_packs(spec, runs, to_train);
  e.packs = static_cast<int>(packs.size());
  // Where packs stack (on CUDA unless MINRNN_STACKED_PACK=0), train_pack makes each stack
  // shape's runs of a pack one model: a run trains at its group's stacked rate, one without a
  // group at the pack's.
  const bool stacking = e.device_kind == "cuda" && rl::packs_stack(true);
  for (const auto& pack : packs) {
    for (const int i : pack) {
      const rl::TrainConfig& c = configs[i];
      const int64_t done = std::min(logged_step(runs[i].run_dir), c.max_steps);
      const int group = stacking && runs[size_t(i)].stacks ? stack_group_size(runs, pack, i) : 1;
      add_training(e, rates, c, group > 1 ? group : static_cast<int>(pack.size()), group > 1,
                   c.max_steps - done);
      // The evaluations during training still ahead, the one at its last logged step counted (a
      // kill may have come before it) and the final one at max_steps (walk 47: left out where
      // max_steps is off eval_every's cadence, as with eval_every 0).
      const int64_t ahead = rl::evaluations_from(done, c.max_steps, c.eval_every);
      add_evaluation(e, rates, c, ahead * c.eval_episodes);
    }
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].state == RunState::kDone) continue;
    ++e.runs_left;
    add_evaluation(e, rates, configs[i], spec.eval_episodes);  // the sweep's `minrnn eval`
  }
  add_up(
      e.training, [](const TrainingLine& l) { return l.run_steps; },
      [](const TrainingLine& l) { return l.run_steps_per_s; }, e.train_seconds, e.train_unmeasured);
  add_up(
      e.evaluation, [](const EvaluationLine& l) { return l.env_steps; },
      [](const EvaluationLine& l) { return l.env_steps_per_s; }, e.eval_seconds, e.eval_unmeasured);
  return e;
}

}  // namespace minrnn::sweep
