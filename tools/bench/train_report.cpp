// How `minrnn bench train` reports its rows (tools/bench/train_report.h).
#include "tools/bench/train_report.h"

#include "io/csv.h"
#include "tools/commands.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <utility>

#include <torch/torch.h>

namespace minrnn::cli::bench_train {
namespace {

// "× peer" over the rounds per backbone/device, in the rows' first-seen order.
std::string ratio_summary(const std::vector<Row>& rows, const PeerRuns& peer) {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& r : rows) {
    const auto key = std::make_pair(r.backbone, r.device);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  std::ostringstream md;
  md << "\n| backbone | device | × peer, median | lowest | highest |\n|---|---|---|---|---|\n";
  char buf[256];
  for (const auto& [backbone, device] : keys) {
    std::vector<double> ratios;
    for (const auto& r : rows) {
      if (r.backbone == backbone && r.device == device) {
        ratios.push_back(r.steps_per_s / peer.around(r.round));
      }
    }
    std::snprintf(buf, sizeof buf, "| %s | %s | %.2f | %.2f | %.2f |\n", backbone.c_str(),
                  device.c_str(), median(ratios), *std::min_element(ratios.begin(), ratios.end()),
                  *std::max_element(ratios.begin(), ratios.end()));
    md << buf;
  }
  return md.str();
}

// When the peer ran, and how a row's "× peer" divides by it.
std::string peer_runs_line(const TrainBenchOptions& o, const PeerRuns& peer) {
  std::ostringstream md;
  const bool has_peer = peer.any(), by_round = o.rounds > 1;
  char buf[512];
  if (has_peer && !by_round) {
    std::snprintf(buf, sizeof buf,
                  "Peer `%s train %g`, run before and after ours: %.2f and %.2f steps/s (mean "
                  "%.2f); × peer below divides by the mean.\n\n",
                  o.peer.c_str(), o.seconds, peer.steps_per_s[0], peer.steps_per_s[1],
                  peer.around(0));
    md << buf;
  } else if (has_peer) {
    md << "Peer `" << o.peer << " train " << o.seconds << "`, run before, between and after our "
       << o.rounds << " rounds (steps/s):";
    for (double rate : peer.steps_per_s) {
      std::snprintf(buf, sizeof buf, " %.2f", rate);
      md << buf;
    }
    md << "; a round's × peer divides by the mean of the two peer runs around it.\n\n";
  }
  return md.str();
}

// The section's heading, the command and what a step is, and the peer's runs.
std::string table_intro(const TrainBenchOptions& o, const std::vector<Row>& rows,
                        const PeerRuns& peer) {
  std::ostringstream md;
  bool cuda = false;
  for (const auto& r : rows) cuda = cuda || r.device != "cpu";
  md << entry_heading(machine_name() + (cuda ? " + GPU " + gpu_name() : "") + ", torch threads " +
                      std::to_string(torch::get_num_threads()))
     << ". One training step = forward + masked MSE + backward + grad clip + AdamW on a "
     << "synthetic batch, B=" << o.shape.batch << ", K=" << o.shape.context << " ("
     << 3 * o.shape.context << " tokens), embed " << o.shape.embed << ", " << o.shape.layers
     << " layers, minRNN expansion " << o.shape.expansion << ", hopper dims (obs "
     << o.shape.obs_dim << ", act " << o.shape.act_dim << "), " << arithmetic(o.shape)
     << "; the trainer's step (rl/train_step.h: a CUDA graph replayed on CUDA, eager "
     << "on the CPU; column step), counted over ~" << o.seconds
     << " s after 5 warm-up steps. Phases are ms per step of the eager step, each phase synced "
     << "(forward includes the loss). Peak = the most bytes torch's allocator held during one "
     << "eager step beyond what lives between steps. Launches = the kernels, copies and fills "
     << "one replay of the graph launches (ops/cuda_graph.h).\n\n";
  md << peer_runs_line(o, peer);
  return md.str();
}

// A row a measured (round,) backbone and device.
std::string rows_table(const TrainBenchOptions& o, const std::vector<Row>& rows,
                       const PeerRuns& peer) {
  std::ostringstream md;
  const bool has_peer = peer.any(), by_round = o.rounds > 1;
  char buf[512];
  md << "|" << (by_round ? " round |" : "")
     << " backbone | device | step | launches | parameters | steps | steps/s |"
     << " ms/step |" << (has_peer ? " × peer |" : "")
     << " forward | backward | clip | AdamW | peak MiB |\n"
     << "|" << (by_round ? "---|" : "") << "---|---|---|---|---|---|---|---|"
     << (has_peer ? "---|" : "") << "---|---|---|---|---|\n";
  for (const auto& r : rows) {
    if (by_round) md << "| " << r.round + 1 << " ";
    std::snprintf(buf, sizeof buf, "| %s | %s | %s | %s | %lld | %lld | %.2f | %.2f |",
                  r.backbone.c_str(), r.device.c_str(), r.mode.c_str(),
                  r.graph_launches ? std::to_string(r.graph_launches).c_str() : "–",
                  static_cast<long long>(r.params), static_cast<long long>(r.steps), r.steps_per_s,
                  1000.0 / r.steps_per_s);
    md << buf;
    if (has_peer) {
      std::snprintf(buf, sizeof buf, " %.2f |", r.steps_per_s / peer.around(r.round));
      md << buf;
    }
    std::snprintf(buf, sizeof buf, " %.1f | %.1f | %.1f | %.1f | %.1f |\n", r.phases.forward,
                  r.phases.backward, r.phases.clip, r.phases.optimizer, r.peak_mib);
    md << buf;
  }
  return md.str();
}

// With --profile: the eager steps' ops and the CUDA steps' kernels.
std::string profiles(const std::vector<Row>& rows) {
  std::ostringstream md;
  for (const auto& r : rows) {
    if (r.profile.empty()) continue;
    md << "\nOps of the trainer's " << r.backbone << " step (" << r.mode << ") on " << r.device
       << " by self time (mean of 5 profiled steps; the hooks add a little to each op):\n\n"
       << r.profile;
  }
  for (const auto& r : rows) {
    if (r.kernel_profile.empty()) continue;
    md << "\nKernels of " << kProfiled << " trainer's steps (" << r.mode << ") of " << r.backbone
       << " on " << r.device << ", as the GPU ran them (CUPTI through LibTorch's Kineto; "
       << "the wall time is the untraced step's):\n\n"
       << r.kernel_profile;
  }
  return md.str();
}

}  // namespace

std::string format_table(const TrainBenchOptions& o, const std::vector<Row>& rows,
                         const PeerRuns& peer) {
  std::string md = table_intro(o, rows, peer) + rows_table(o, rows, peer);
  if (peer.any() && o.rounds > 1) md += ratio_summary(rows, peer);
  return md + profiles(rows);
}

BenchCsv results_csv(const TrainBenchOptions& o, const std::vector<Row>& rows,
                     const PeerRuns& peer) {
  BenchCsv csv({"round",
                "device",
                "machine",
                "backbone",
                "step",
                "batch",
                "context",
                "embed",
                "layers",
                "expansion",
                "matmul_precision",
                "params",
                "steps",
                "steps_per_s",
                "ms_per_step",
                "forward_ms",
                "backward_ms",
                "clip_ms",
                "optimizer_ms",
                "peak_mib",
                "peer_steps_per_s",
                "graph_launches"});
  for (const auto& r : rows) {
    csv.add_row({std::to_string(r.round + 1),
                 r.device,
                 hardware_name(torch::Device(r.device)),
                 r.backbone,
                 r.mode,
                 std::to_string(o.shape.batch),
                 std::to_string(o.shape.context),
                 std::to_string(o.shape.embed),
                 std::to_string(o.shape.layers),
                 io::csv_number(o.shape.expansion),
                 matmul_precision_on(o.shape, r.device),
                 std::to_string(r.params),
                 std::to_string(r.steps),
                 io::csv_number(r.steps_per_s),
                 io::csv_number(1000.0 / r.steps_per_s),
                 io::csv_number(r.phases.forward),
                 io::csv_number(r.phases.backward),
                 io::csv_number(r.phases.clip),
                 io::csv_number(r.phases.optimizer),
                 io::csv_number(r.peak_mib),
                 io::csv_number(peer.around(r.round)),
                 std::to_string(r.graph_launches)});
  }
  return csv;
}

}  // namespace minrnn::cli::bench_train
