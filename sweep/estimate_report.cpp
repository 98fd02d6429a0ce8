// `minrnn sweep --estimate`'s printout: the projection of sweep/estimate.h as markdown and JSON.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <utility>
#include <vector>

#include "sweep/estimate.h"

namespace minrnn::sweep {
namespace {

std::string hours(double seconds) {
  if (std::isnan(seconds)) return "–";  // no measured rate
  char buf[32];
  std::snprintf(buf, sizeof buf, seconds < 36 ? "%.4f" : "%.2f", seconds / 3600);
  return buf;
}

// The bench pack command that measures `l`'s shape, "{B}" where its backbones go.
std::string bench_pack_command(const std::string& kind, const TrainingLine& l) {
  const StepShape& s = l.shape;
  std::string command = "minrnn bench pack --device " + kind + " --backbones {B} --packs " +
                        std::to_string(l.pack) + " --embed " + std::to_string(s.embed) +
                        " --layers " + std::to_string(s.layers) + " --batch " +
                        std::to_string(s.batch) + " --context " + std::to_string(s.context);
  if (s.backbone != "transformer" && s.expansion != 1) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " --expansion %g", s.expansion);
    command += buf;
  }
  if (s.matmul_precision != "fp32") command += " --matmul-precision " + s.matmul_precision;
  if (l.stacked) command += " --stacked";
  return command;
}

// The benches that would measure the rates the estimate lacks — a shape none measured, a pack
// smaller than every one measured (it borrows a larger P's rate, which errs short) — each once,
// backbones of one shape in one command.
std::vector<std::string> missing_measurements(const SweepEstimate& e) {
  std::vector<std::pair<std::string, std::string>> packs;  // command, its backbones
  for (const TrainingLine& l : e.training) {
    if ((l.measured_pack != 0 && !l.below_measured) || l.run_steps == 0) continue;
    const std::string command = bench_pack_command(e.device_kind, l);
    auto at = std::find_if(packs.begin(), packs.end(), [&](auto& p) { return p.first == command; });
    if (at == packs.end()) {
      packs.emplace_back(command, l.shape.backbone);
    } else if (("," + at->second + ",").find("," + l.shape.backbone + ",") == std::string::npos) {
      at->second += "," + l.shape.backbone;
    }
  }
  std::vector<std::string> commands;
  for (const auto& [command, backbones] : packs) {
    const size_t at = command.find("{B}");
    commands.push_back(command.substr(0, at) + backbones + command.substr(at + 3));
  }
  for (const EvaluationLine& l : e.evaluation) {
    if (!l.policy.empty() || l.episodes == 0) continue;
    const std::string command = "minrnn bench eval" + (l.env.empty() ? "" : " --env " + l.env) +
                                " --embed " + std::to_string(l.embed) + " --layers " +
                                std::to_string(l.layers) + " --context " +
                                std::to_string(l.context);
    if (std::find(commands.begin(), commands.end(), command) == commands.end())
      commands.push_back(command);
  }
  return commands;
}

void format_training(std::ostringstream& md, const SweepEstimate& e) {
  md << "| runs | shape | pack | rate measured at P | run-steps to train | run-steps/s | hours |\n"
     << "|---|---|---|---|---|---|---|\n";
  for (const TrainingLine& l : e.training) {
    char rate[32] = "–";
    if (l.run_steps_per_s > 0) std::snprintf(rate, sizeof rate, "%.1f", l.run_steps_per_s);
    md << "| " << l.runs << " | " << l.shape.describe() << (l.stacked ? ", stacked" : "") << " | "
       << l.pack << " | " << (l.measured_pack ? std::to_string(l.measured_pack) : "none")
       << (l.below_measured ? " (above the pack: errs short)" : "") << " | " << l.run_steps << " | "
       << rate << " | " << hours(l.seconds) << " |\n";
  }
}

void format_evaluation(std::ostringstream& md, const SweepEstimate& e) {
  md << "\n| env | backbone | embed | episodes | env steps (at most) | policy measured | "
        "env steps/s | hours |\n|---|---|---|---|---|---|---|---|\n";
  for (const EvaluationLine& l : e.evaluation) {
    char rate[32] = "–";
    if (l.env_steps_per_s > 0) std::snprintf(rate, sizeof rate, "%.0f", l.env_steps_per_s);
    const std::string env = !l.env.empty()        ? l.env
                            : l.rates_env.empty() ? "?"
                                                  : "? (rates of " + l.rates_env + ")";
    md << "| " << env << " | " << l.backbone << " | " << l.embed << " | " << l.episodes << " | "
       << l.env_steps << " | " << (l.policy.empty() ? "none" : l.policy) << " | " << rate << " | "
       << hours(l.seconds) << " |\n";
  }
}

}  // namespace

std::string format_estimate(const SweepSpec& spec, const SweepEstimate& e) {
  std::ostringstream md;
  md << "Estimate for " << spec.file << " on " << e.device_kind
     << (e.train_machine.empty() ? "" : " (" + e.train_machine + ")") << ": " << e.runs_left
     << " of " << e.runs << " runs left";
  if (e.runs_left == 0) {  // no rate is read: none is named
    md << ".\n\nNothing left to run: `minrnn report " << spec.out << "` makes the table.\n";
    return md.str();
  }
  md << ", those still to train in " << e.packs << " pack(s) of up to "
     << pack_limit_text(spec, e.device_kind) << ". Rates from:";
  for (const std::string& f : e.files) md << " " << f;
  md << "\n\n";
  format_training(md, e);
  format_evaluation(md, e);
  if (const auto commands = missing_measurements(e); !commands.empty()) {
    md << "\nRates not measured (their lines show –, or borrow a larger pack's: errs short); on "
       << e.device_kind << (e.train_machine.empty() ? "" : " (" + e.train_machine + ")")
       << " for training and on this host's CPU for evaluation, run:\n";
    for (const std::string& c : commands) md << "    " << c << "\n";
  }
  const auto total = [](double seconds, int unmeasured, size_t lines) {
    if (unmeasured == 0) return hours(seconds) + " h";
    if (static_cast<size_t>(unmeasured) == lines)
      return "unknown (none of its " + std::to_string(lines) + " line(s) has a measured rate)";
    return hours(seconds) + " h over the lines measured (" + std::to_string(unmeasured) + " of " +
           std::to_string(lines) + " have no rate)";
  };
  const bool complete = e.train_unmeasured == 0 && e.eval_unmeasured == 0;
  md << "\nTraining, the device's time: "
     << total(e.train_seconds, e.train_unmeasured, e.training.size())
     << ". Its packs take turns (`parallel` does not shorten it); a pack's run-step costs 1 / the "
        "rate measured at the largest P that fits in it.\n"
     << "Evaluation, CPU time" << (e.eval_machine.empty() ? "" : " (" + e.eval_machine + ")")
     << ": " << total(e.eval_seconds, e.eval_unmeasured, e.evaluation.size())
     << ". An upper bound: every episode its env's full time limit (1 000 steps for D4RL's).\n"
     << "Wall time" << (complete ? "" : ", over the lines measured") << ": ";
  if (e.device_kind == "cuda") {
    md << hours(std::max(e.train_seconds, e.eval_seconds)) << " h (the evaluations on the CPU "
       << "wholly beside the training) to " << hours(e.train_seconds + e.eval_seconds)
       << " h (one after the other).\n";
  } else {
    md << hours(e.train_seconds + e.eval_seconds)
       << " h (training and evaluation share the CPU).\n";
  }
  return md.str();
}

nlohmann::json estimate_json(const SweepEstimate& e) {
  const auto seconds = [](double s) {
    return std::isnan(s) ? nlohmann::json() : nlohmann::json(s);
  };
  nlohmann::json training = nlohmann::json::array(), evaluation = nlohmann::json::array();
  for (const TrainingLine& l : e.training) {
    training.push_back({{"backbone", l.shape.backbone},
                        {"embed", l.shape.embed},
                        {"layers", l.shape.layers},
                        {"batch", l.shape.batch},
                        {"context", l.shape.context},
                        {"expansion", l.shape.expansion},
                        {"matmul_precision", l.shape.matmul_precision},
                        {"runs", l.runs},
                        {"pack", l.pack},
                        {"measured_pack", l.measured_pack},
                        {"below_measured", l.below_measured},
                        {"stacked", l.stacked},
                        {"run_steps", l.run_steps},
                        {"run_steps_per_s", l.run_steps_per_s},
                        {"seconds", seconds(l.seconds)}});
  }
  for (const EvaluationLine& l : e.evaluation) {
    evaluation.push_back({{"env", l.env},
                          {"rates_env", l.rates_env},
                          {"backbone", l.backbone},
                          {"embed", l.embed},
                          {"layers", l.layers},
                          {"context", l.context},
                          {"episodes", l.episodes},
                          {"env_steps", l.env_steps},
                          {"policy", l.policy},
                          {"env_steps_per_s", l.env_steps_per_s},
                          {"seconds", seconds(l.seconds)}});
  }
  return {{"device", e.device_kind},
          {"train_machine", e.train_machine},
          {"eval_machine", e.eval_machine},
          {"rates", e.files},
          {"runs", e.runs},
          {"runs_left", e.runs_left},
          {"packs", e.packs},
          {"training", training},
          {"evaluation", evaluation},
          {"missing", missing_measurements(e)},
          {"train_seconds", e.train_seconds},
          {"train_lines_unmeasured", e.train_unmeasured},
          {"eval_seconds", e.eval_seconds},
          {"eval_lines_unmeasured", e.eval_unmeasured}};
}

}  // namespace minrnn::sweep
