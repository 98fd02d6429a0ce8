// `minrnn bench train`: optimizer steps/s of the decision model's training step (forward, masked
// MSE, backward, grad clipping, AdamW) per backbone, on a synthetic batch of the trainer's shapes
// (hopper dims, B=64, K=20, embed 128, 3 layers by default). CPU always, CUDA when available.
// Prints a markdown table and files it under "## Training (minrnn bench train)", the numbers as
// CSV in runs/bench/train.csv.
#include <chrono>
#include <cstdio>
#include <sstream>

#include "rl/decision_model.h"
#include "tools/bench_report.h"
#include "tools/commands.h"

namespace minrnn::cli {
namespace {

constexpr const char* kSection = "## Training (minrnn bench train)";
constexpr const char* kDefaultCsv = "runs/bench/train.csv";

struct TrainBenchOptions {
  std::vector<std::string> backbones = {"mingru", "minlstm", "hgrn", "transformer"};
  std::vector<std::string> devices;  // default: cpu, plus cuda when available
  int64_t batch = 64, context = 20, embed = 128, layers = 3, obs_dim = 11, act_dim = 3;
  double seconds = 10;  // timed seconds per cell (after warm-up)
  bool quick = false;
  BenchFiling filing;
};

struct Row {
  std::string backbone, device;
  int64_t params = 0, steps = 0;
  double steps_per_s = 0;
};

Row measure(const TrainBenchOptions& o, const std::string& backbone, const torch::Device& dev) {
  torch::manual_seed(0);
  rl::DecisionModelOptions mo;
  mo.obs_dim = o.obs_dim;
  mo.act_dim = o.act_dim;
  mo.backbone = backbone;
  mo.n_layers = o.layers;
  mo.embed_dim = o.embed;
  rl::DecisionModel model(mo);
  model->to(dev);
  model->train();
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(1e-4).weight_decay(1e-4));
  const auto f = torch::TensorOptions().device(dev);
  const int64_t B = o.batch, K = o.context;
  rl::DecisionBatch b{torch::randn({B, K, 1}, f), torch::randn({B, K, o.obs_dim}, f),
                      torch::rand({B, K, o.act_dim}, f) * 2 - 1,
                      torch::randint(0, 1000, {B, K}, f.dtype(torch::kInt64))};
  auto mask = torch::ones({B, K}, f);
  auto step = [&] {
    auto pred = model->forward(b);
    auto loss = ((pred - b.actions).pow(2).mean(-1) * mask).sum() / mask.sum();
    opt.zero_grad();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 0.25);
    opt.step();
    // The trainer reads the loss every step (a device sync); so do we.
    return loss.item<double>();
  };
  for (int i = 0; i < 3; ++i) step();  // warm-up: allocator, kernels, Adam state
  Row row{backbone, dev.str()};
  for (const auto& p : model->parameters()) row.params += p.numel();
  const auto t0 = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (elapsed < o.seconds || row.steps < 5) {
    step();
    ++row.steps;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  row.steps_per_s = row.steps / elapsed;
  return row;
}

std::string format_table(const TrainBenchOptions& o, const std::vector<Row>& rows) {
  std::ostringstream md;
  bool cuda = false;
  for (const auto& r : rows) cuda = cuda || r.device != "cpu";
  md << "### " << timestamp() << " — " << machine_name()
     << (cuda ? " + GPU " + gpu_name() : std::string()) << ", torch threads "
     << torch::get_num_threads() << "\n\n"
     << "Command: `minrnn bench train" << (o.quick ? " --quick" : "") << "`. One training step = "
     << "forward + masked MSE + backward + grad clip + AdamW on a synthetic batch, B=" << o.batch
     << ", K=" << o.context << ", embed " << o.embed << ", " << o.layers
     << " layers, hopper dims (obs " << o.obs_dim << ", act " << o.act_dim << "), float32; "
     << "steps counted over ~" << o.seconds << " s after 3 warm-up steps.\n\n"
     << "| backbone | device | parameters | steps | steps/s | ms/step |\n"
     << "|---|---|---|---|---|---|\n";
  char buf[256];
  for (const auto& r : rows) {
    std::snprintf(buf, sizeof buf, "| %s | %s | %lld | %lld | %.1f | %.2f |\n", r.backbone.c_str(),
                  r.device.c_str(), static_cast<long long>(r.params),
                  static_cast<long long>(r.steps), r.steps_per_s, 1000.0 / r.steps_per_s);
    md << buf;
  }
  return md.str();
}

BenchCsv results_csv(const TrainBenchOptions& o, const std::vector<Row>& rows) {
  BenchCsv csv({"device", "machine", "backbone", "batch", "context", "embed", "layers", "params",
                "steps", "steps_per_s", "ms_per_step"});
  for (const auto& r : rows) {
    csv.add_row({r.device, hardware_name(torch::Device(r.device)), r.backbone,
                 std::to_string(o.batch), std::to_string(o.context), std::to_string(o.embed),
                 std::to_string(o.layers), std::to_string(r.params), std::to_string(r.steps),
                 csv_number(r.steps_per_s), csv_number(1000.0 / r.steps_per_s)});
  }
  return csv;
}

}  // namespace

void add_bench_train(CLI::App& bench) {
  auto o = std::make_shared<TrainBenchOptions>();
  auto* sub = bench.add_subcommand("train", "Training steps/s per backbone (synthetic batch)");
  sub->add_option("--backbones", o->backbones, "mingru,minlstm,hgrn,transformer")->delimiter(',');
  sub->add_option("--devices", o->devices, "cpu,cuda (default: cpu + cuda if available)")
      ->delimiter(',');
  sub->add_option("--batch", o->batch, "B")->check(positive());
  sub->add_option("--context", o->context, "K")->check(positive());
  sub->add_option("--embed", o->embed, "embedding width")->check(positive());
  sub->add_option("--layers", o->layers, "layers")->check(positive());
  sub->add_option("--seconds", o->seconds, "timed seconds per cell")->check(positive());
  sub->add_flag("--quick", o->quick, "1 s per cell, for a smoke run");
  add_filing_options(sub, o->filing, kDefaultCsv);
  sub->callback([o, sub] {
    if (o->quick) quick_default(sub, "--seconds", o->seconds, 1.0);
    if (o->devices.empty()) {
      o->devices = {"cpu"};
      if (torch::cuda::is_available()) o->devices.push_back("cuda");
    }
    std::vector<Row> rows;
    for (const auto& d : o->devices) {
      const torch::Device device = bench_device(d, {}, "--devices");
      for (const auto& b : o->backbones) {
        std::fprintf(stderr, "bench train: %s on %s ...\n", b.c_str(), d.c_str());
        rows.push_back(measure(*o, b, device));
      }
    }
    file_result(o->filing, kSection, format_table(*o, rows), results_csv(*o, rows), kDefaultCsv);
  });
}

}  // namespace minrnn::cli
